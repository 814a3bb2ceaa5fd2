package methods

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
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

// With S = 0 every mask is full, the phase-2 and refinement steps have nothing to do, and
// DM-PFL is FedAvg: the unmasked SGD step and the same size-weighted float64 average in
// the same client order, so the global models and every metric agree bit for bit (the
// prune/regrow rounds prune entries and regrow the same ones with their values).
// FedDST with S = 0 is FedAvg the same way.
func TestDMPFLSparsityZeroIsFedAvg(t *testing.T) {
	_, avg := methodRun(t, "fedavg", nil, nil)
	b, err := train.Run(context.Background(), avg)
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"dmpfl", "feddst"} {
		_, cfg := methodRun(t, method, map[string]float64{"sparsity": 0, "readjust_every": 2}, nil)
		a, err := train.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Global, b.Global) || !reflect.DeepEqual(a.Metrics, b.Metrics) {
			t.Errorf("%s with S = 0 differs from FedAvg", method)
		}
	}
}

func TestDMPFLMasksKeepTargetSparsity(t *testing.T) {
	for _, method := range []string{"dmpfl", "feddst"} {
		r, cfg := methodRun(t, method, map[string]float64{"sparsity": 0.5, "readjust_every": 1, "alpha_s": 0.2}, nil)
		r.Train.Rounds = 4
		want := ERKCounts(model.ModelSpec{Arch: "logreg", InputShape: cfg.Data.Shape, NumClasses: cfg.Data.Classes}.Init(1), 0.5)
		cfg.Run.Train.CheckpointEvery = 1
		differs := false
		cfg.Checkpoint = func(st *train.State) error {
			mg := st.Method.(*sparseState).GlobalMask
			for name, k := range maskCounts(mg) {
				if k > want[name] || (method == "feddst" && k != want[name]) {
					t.Errorf("%s round %d: global mask %s has %d active, want %d", method, st.Round, name, k, want[name])
				}
			}
			for c, m := range st.Masks {
				if got := maskCounts(m); !reflect.DeepEqual(got, want) {
					t.Errorf("%s round %d: client %d mask counts %v, want %v", method, st.Round, c, got, want)
				}
				if !reflect.DeepEqual(m, mg) {
					differs = true
				}
			}
			return nil
		}
		st, err := train.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if method == "dmpfl" && !differs {
			t.Error("dmpfl: no client's mask ever left the global mask")
		}
		if method == "feddst" {
			mg := st.Method.(*sparseState).GlobalMask
			for ti, tt := range st.Global {
				for j, v := range tt.Data {
					if mg[ti].Data[j] == 0 && v != 0 {
						t.Fatalf("feddst: inactive global %s[%d] = %v", tt.Name, j, v)
					}
				}
			}
		}
	}
}

func TestDMPFLSchedule(t *testing.T) {
	d := &dmpfl{iterations: 2}
	var phases []int
	var lasts []int
	for r := 1; r <= 10; r++ {
		p, last := d.phase(r, 10)
		phases = append(phases, p)
		if last {
			lasts = append(lasts, r)
		}
	}
	if want := []int{1, 1, 2, 2, 1, 1, 2, 2, 2, 2}; !reflect.DeepEqual(phases, want) {
		t.Errorf("phases %v, want %v", phases, want)
	}
	if want := []int{2, 4, 6, 10}; !reflect.DeepEqual(lasts, want) {
		t.Errorf("block ends %v, want %v", lasts, want)
	}
	if p, _ := (&dmpfl{}).phase(7, 10); p != 1 {
		t.Error("iterations 0 must stay in phase 1")
	}
}

func TestTrainFLOPsCNN4(t *testing.T) {
	spec := model.ModelSpec{Arch: "cnn4", InputShape: []int{28, 28, 1}, NumClasses: 10}
	// conv1 24·24·(5·5·1)·32, conv2 8·8·(5·5·32)·64, fc1 1024·512, classifier 512·10.
	macs := 24*24*25*32 + 8*8*25*32*64 + 1024*512 + 512*10
	got, err := train.TrainFLOPs(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := 6.0 * float64(macs); got != want || macs != 4267008 {
		t.Errorf("dense cnn4 training FLOPs per sample %v, want %v", got, want)
	}
	p := spec.Init(1)
	cls := p[p.Find("classifier.weight")].Data
	for j := 0; j < len(cls)/2; j++ {
		cls[j] = 0
	}
	got, err = train.TrainFLOPs(spec, p)
	if err != nil {
		t.Fatal(err)
	}
	if want := 6.0 * float64(macs-512*10/2); got != want {
		t.Errorf("half-sparse classifier: %v FLOPs, want %v", got, want)
	}
}

func cloneState(st *train.State) *train.State {
	c := *st
	c.Global = st.Global.Clone()
	clones := func(ls []tensor.List) []tensor.List {
		if ls == nil {
			return nil
		}
		out := make([]tensor.List, len(ls))
		for i, l := range ls {
			out[i] = l.Clone()
		}
		return out
	}
	c.Personal, c.Masks = clones(st.Personal), clones(st.Masks)
	c.BN = clones(st.BN)
	if s, ok := st.Method.(*sparseState); ok {
		c.Method = &sparseState{GlobalMask: s.GlobalMask.Clone()}
	}
	c.Metrics = append([]train.Metric(nil), st.Metrics...)
	c.Comm = append([]train.Comm(nil), st.Comm...)
	c.Work = append([]train.Work(nil), st.Work...)
	c.Selection = append([]train.Selection(nil), st.Selection...)
	return &c
}

// A DM-PFL or FedDST run resumed after any round ends bit-identical to an uninterrupted
// one, across the phase change and the refinement of the personal weights.
func TestSparseMethodsResumeBitIdentical(t *testing.T) {
	for _, method := range []string{"dmpfl", "feddst"} {
		r, cfg := methodRun(t, method, map[string]float64{"readjust_every": 1, "alpha_s": 0.1, "iterations": 1}, nil)
		r.Train.Rounds = 4
		var cps []*train.State
		cfg.Checkpoint = func(st *train.State) error { cps = append(cps, cloneState(st)); return nil }
		full, err := train.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, cp := range cps {
			round := cp.Round
			rc := cfg
			rc.Checkpoint, rc.Resume = nil, cp
			got, err := train.Run(context.Background(), rc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Global, full.Global) || !reflect.DeepEqual(got.Personal, full.Personal) ||
				!reflect.DeepEqual(got.Masks, full.Masks) || !reflect.DeepEqual(got.Metrics, full.Metrics) ||
				!reflect.DeepEqual(got.Comm, full.Comm) || !reflect.DeepEqual(got.Work, full.Work) {
				t.Errorf("%s resumed after round %d differs", method, round)
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

// FedOBP and FedDPA never select BatchNorm running statistics, however high they score.
func TestFedOBPSkipsRunningStatistics(t *testing.T) {
	score := tensor.List{
		{Name: "conv1.weight", Shape: []int{2, 2}, Data: []float32{0.1, 0.2, 0.3, 0.4}},
		{Name: "bn1.running_var", Shape: []int{2}, Data: []float32{9, 9}},
	}
	for _, perLayer := range []bool{false, true} {
		f := &fedOBP{q: 0.5, perLayer: perLayer}
		mask := f.selectMask(score)
		if got := mask[1].Data; got[0] != 0 || got[1] != 0 {
			t.Errorf("perLayer %v: running statistics selected: %v", perLayer, got)
		}
		if got := mask[0].Data; got[2] != 1 || got[3] != 1 || got[0] != 0 {
			t.Errorf("perLayer %v: conv1 mask %v, want [0 0 1 1] (above the median of its 4 scores)", perLayer, got)
		}
	}
}
