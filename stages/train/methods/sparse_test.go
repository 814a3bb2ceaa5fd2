package methods

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

func cnn4Params() tensor.List {
	return model.ModelSpec{Arch: "cnn4", InputShape: []int{28, 28, 1}, NumClasses: 10}.Init(1)
}

func weightTotal(p tensor.List) int {
	n := 0
	for _, t := range p {
		if isWeight(t) {
			n += len(t.Data)
		}
	}
	return n
}

func TestERKCountsSumToTarget(t *testing.T) {
	p := cnn4Params()
	total := weightTotal(p)
	for _, d := range []float64{0.01, 0.1, 0.5, 0.9, 1} {
		counts := ERKCounts(p, d)
		sum := 0
		for _, tt := range p {
			if !isWeight(tt) {
				if _, ok := counts[tt.Name]; ok {
					t.Errorf("bias %s got a count", tt.Name)
				}
				continue
			}
			k := counts[tt.Name]
			if k < 0 || k > len(tt.Data) {
				t.Fatalf("density %v: %s gets %d of %d", d, tt.Name, k, len(tt.Data))
			}
			sum += k
		}
		if want := d * float64(total); math.Abs(float64(sum)-want) > 1 {
			t.Errorf("density %v: %d active weights, want %v (within one)", d, sum, want)
		}
		// ERK: the small classifier is denser than the large fc1 unless both are capped.
		fc1 := float64(counts["fc1.weight"]) / float64(len(p[p.Find("fc1.weight")].Data))
		cls := float64(counts["classifier.weight"]) / float64(len(p[p.Find("classifier.weight")].Data))
		if d < 1 && cls <= fc1 {
			t.Errorf("density %v: classifier density %v not above fc1's %v", d, cls, fc1)
		}
	}
	// At 0.5 on cnn4 the conv1 kernel (800 entries, ERK score 0.0775·ε) ends dense.
	if c := ERKCounts(p, 0.5); c["conv1.weight"] != 800 {
		t.Errorf("conv1 gets %d of 800 at density 0.5, want all (capped at 1)", c["conv1.weight"])
	}
}

func TestPruneRegrowHandCase(t *testing.T) {
	w := tensor.List{{Name: "fc.weight", Shape: []int{2, 2}, Data: []float32{0.1, -3, 0.5, 0}}}
	g := tensor.List{{Name: "fc.weight", Shape: []int{2, 2}, Data: []float32{5, 0, 1, 9}}}
	m := tensor.List{{Name: "fc.weight", Shape: []int{2, 2}, Data: []float32{1, 1, 1, 0}}}
	// 3 active, k = round(0.5·3) = 2: prune 0.1 and 0.5 (smallest |w|); regrow by |g| among
	// {0, 2 (just pruned), 3}: entries 3 (new, starts at 0) and 0 (keeps 0.1).
	out := PruneRegrow(w, g, m, 0.5, true)
	if want := []float32{1, 1, 0, 1}; !reflect.DeepEqual(m[0].Data, want) {
		t.Errorf("mask %v, want %v", m[0].Data, want)
	}
	if want := []float32{0.1, -3, 0, 0}; !reflect.DeepEqual(out[0].Data, want) {
		t.Errorf("weights %v, want %v", out[0].Data, want)
	}
	// FedDST's rule: just-pruned entries cannot come back; only entry 3 is a candidate.
	m2 := tensor.List{{Name: "fc.weight", Shape: []int{2, 2}, Data: []float32{1, 1, 1, 0}}}
	out = PruneRegrow(w, g, m2, 0.5, false)
	if want := []float32{0, 1, 0, 1}; !reflect.DeepEqual(m2[0].Data, want) {
		t.Errorf("FedDST mask %v, want %v", m2[0].Data, want)
	}
	if out[0].Data[0] != 0 || out[0].Data[2] != 0 {
		t.Errorf("pruned weights not zeroed: %v", out[0].Data)
	}
}

func TestPruneRegrowKeepsSparsity(t *testing.T) {
	p := cnn4Params()
	counts := ERKCounts(p, 0.3)
	m := topMagnitudeMask(p, counts, nil)
	w := applyMask(p, m)
	r := rand.New(rand.NewPCG(1, 2))
	for step := 0; step < 6; step++ {
		g := train.ZeroMask(p)
		for _, tt := range g {
			for j := range tt.Data {
				tt.Data[j] = float32(r.NormFloat64())
			}
		}
		w = PruneRegrow(w, g, m, 0.2, step%2 == 0)
		if got := maskCounts(m); !reflect.DeepEqual(got, counts) {
			t.Fatalf("step %d: counts %v, want %v", step, got, counts)
		}
		for ti, tt := range w {
			for j, v := range tt.Data {
				if m[ti].Data[j] == 0 && v != 0 {
					t.Fatalf("step %d: inactive %s[%d] = %v", step, tt.Name, j, v)
				}
			}
		}
	}
}

// Sparse and selection methods leave BatchNorm tensors and biases dense: only conv and
// dense weights (two or more dimensions) get ERK budgets.
func TestERKSkipsBatchNormAndBiases(t *testing.T) {
	params := tensor.List{
		{Name: "conv1.weight", Shape: []int{4, 3, 3, 3}, Data: make([]float32, 108)},
		{Name: "bn1.weight", Shape: []int{4}, Data: make([]float32, 4)},
		{Name: "bn1.bias", Shape: []int{4}, Data: make([]float32, 4)},
		{Name: "bn1.running_mean", Shape: []int{4}, Data: make([]float32, 4)},
		{Name: "classifier.weight", Shape: []int{10, 4}, Data: make([]float32, 40)},
		{Name: "classifier.bias", Shape: []int{10}, Data: make([]float32, 10)},
	}
	counts := ERKCounts(params, 0.5)
	if len(counts) != 2 || counts["conv1.weight"] == 0 || counts["classifier.weight"] == 0 {
		t.Fatalf("ERK budgets %v, want conv1.weight and classifier.weight only", counts)
	}
	if got := counts["conv1.weight"] + counts["classifier.weight"]; got != 74 {
		t.Errorf("ERK total %d, want round(0.5·148) = 74", got)
	}
}

// The two top-k masks share rankedMask: magnitude with candidates, votes with |w| as the
// tie-break, both breaking remaining ties toward the lower position; a tensor without a
// count stays dense.
func TestTopKMasksRankAndBreakTies(t *testing.T) {
	w := tensor.List{
		{Name: "a.weight", Shape: []int{2, 3}, Data: []float32{0.5, -2, 0.5, 1, -0.5, 3}},
		{Name: "a.bias", Shape: []int{2}, Data: []float32{7, 8}},
	}
	counts := map[string]int{"a.weight": 3}
	got := topMagnitudeMask(w, counts, nil)
	if want := []float32{0, 1, 0, 1, 0, 1}; !slices.Equal(got[0].Data, want) {
		t.Errorf("magnitude mask %v, want %v", got[0].Data, want)
	}
	if want := []float32{1, 1}; !slices.Equal(got[1].Data, want) {
		t.Errorf("bias without a count: %v, want dense %v", got[1].Data, want)
	}
	// Candidates 0, 2, 4 all have |w| = 0.5: only two of the three fit, the lower positions.
	cand := tensor.List{{Name: "a.weight", Shape: []int{2, 3}, Data: []float32{1, 0, 1, 0, 1, 0}}}
	got = topMagnitudeMask(w, map[string]int{"a.weight": 2}, cand)
	if want := []float32{1, 0, 1, 0, 0, 0}; !slices.Equal(got[0].Data, want) {
		t.Errorf("candidate mask %v, want %v", got[0].Data, want)
	}
	// More asked than offered keeps every candidate.
	got = topMagnitudeMask(w, map[string]int{"a.weight": 5}, cand)
	if want := []float32{1, 0, 1, 0, 1, 0}; !slices.Equal(got[0].Data, want) {
		t.Errorf("short candidate mask %v, want %v", got[0].Data, want)
	}
	// Votes first; equal votes go to the larger |w|, then the lower position.
	votes := tensor.List{{Name: "a.weight", Shape: []int{2, 3}, Data: []float32{2, 1, 2, 1, 2, 0}}}
	got = voteMask(votes, w, map[string]int{"a.weight": 4})
	if want := []float32{1, 1, 1, 0, 1, 0}; !slices.Equal(got[0].Data, want) {
		t.Errorf("vote mask %v, want %v", got[0].Data, want)
	}
	got = voteMask(votes, w, map[string]int{"a.weight": 2})
	if want := []float32{1, 0, 1, 0, 0, 0}; !slices.Equal(got[0].Data, want) {
		t.Errorf("vote mask k=2 %v, want %v", got[0].Data, want)
	}
}
