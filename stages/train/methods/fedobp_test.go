package methods

import (
	"context"
	"slices"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/train"
)

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

func TestFedOBPQuantileOnePersonalizesNothing(t *testing.T) {
	_, cfg := methodRun(t, "fedobp", map[string]float64{"q": 1}, nil)
	st, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Selection) == 0 {
		t.Fatal("no selection rows")
	}
	for _, s := range st.Selection {
		if s.Personalized != 0 {
			t.Fatalf("q = 1 personalized %d entries of %s", s.Personalized, s.Tensor)
		}
	}
	_, cfg = methodRun(t, "fedobp", map[string]float64{"q": 0.9}, nil)
	st, err = train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	any := false
	for _, s := range st.Selection {
		any = any || s.Personalized > 0
	}
	if !any {
		t.Error("q = 0.9 personalized nothing after clients trained")
	}
}

// The personalized count equals the number of scores strictly above the interpolated
// quantile, computed by hand.
func TestFedOBPSelectionMatchesQuantile(t *testing.T) {
	score := tensor.List{
		{Name: "fc1.weight", Shape: []int{5}, Data: []float32{0.1, 0.5, 0.2, 0.9, 0.3}},
		{Name: "classifier.weight", Shape: []int{5}, Data: []float32{0.7, 0.4, 0.8, 0.6, 0.0}},
	}
	// Sorted: 0 .1 .2 .3 .4 .5 .6 .7 .8 .9; q = 0.75 → h = 6.75 → τ = 0.6 + 0.75·0.1 = 0.675:
	// above it 0.7, 0.8, 0.9.
	f := &fedOBP{q: 0.75}
	mask := f.selectMask(score)
	if ones, _ := count(mask); ones != 3 {
		t.Errorf("q = 0.75: %d personalized, want 3", ones)
	}
	if mask[0].Data[3] != 1 || mask[1].Data[0] != 1 || mask[1].Data[2] != 1 {
		t.Errorf("wrong entries: %v", mask)
	}
	// Only the classifier: its scores 0 .4 .6 .7 .8, q = 0.5 → τ = 0.6: above it 0.7, 0.8.
	f = &fedOBP{q: 0.5, clsOnly: true}
	mask = f.selectMask(score)
	if ones, _ := count(mask); ones != 2 || mask[0].Data[3] != 0 {
		t.Errorf("cls_only: %v", mask)
	}
	// Ties at τ stay global.
	tied := tensor.List{{Name: "classifier.weight", Shape: []int{4}, Data: []float32{1, 1, 1, 1}}}
	if ones, _ := count((&fedOBP{q: 0.5}).selectMask(tied)); ones != 0 {
		t.Errorf("ties at tau personalized %d", ones)
	}
}

// impl flbench scores BatchNorm running statistics like any entry, as the FL-bench fork
// scores its whole state_dict; paper leaves them out. Hand-computed: global model all 0,
// the client's last model w = [1 2 3 4], bn1.running_mean = [5 0.5]; obp scores (θ_c −
// θ_g)², unnormalized: w 1 4 9 16, mean 25 0.25. paper: the median (q 0.5, linear
// interpolation) of w's four scores is 4 + 0.5·(9 − 4) = 6.5, so w keeps [_ _ 3 4] and the
// running mean is the global [0 0]. flbench: the median of all six (0.25 1 4 9 16 25) is
// also 6.5, and 25 > 6.5, so the running mean keeps its 5: [5 0].
func TestFedOBPImplFLBenchScoresRunningStatistics(t *testing.T) {
	mk := func(w []float32, mean []float32) tensor.List {
		return tensor.List{{Name: "conv1.weight", Shape: []int{2, 2}, Data: w},
			{Name: "bn1.running_mean", Shape: []int{2}, Data: mean}}
	}
	for _, tc := range []struct {
		impl     string
		wantMean []float32
	}{{"paper", []float32{0, 0}}, {"flbench", []float32{5, 0}}} {
		f := newFedOBP(&FedOBPParams{Q: 0.5, Score: "obp", Threshold: "global", Norm: "none", Impl: tc.impl, Fisher: "full"}).(*fedOBP)
		st := &train.State{Global: mk([]float32{0, 0, 0, 0}, []float32{0, 0})}
		f.Init(st, 1)
		st.Personal[0] = mk([]float32{1, 2, 3, 4}, []float32{5, 0.5})
		got, mask, err := f.personalize(st, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := []float32{0, 0, 3, 4}; !slices.Equal(got[0].Data, want) {
			t.Errorf("impl %s: conv1.weight %v, want %v", tc.impl, got[0].Data, want)
		}
		if !slices.Equal(got[1].Data, tc.wantMean) {
			t.Errorf("impl %s: running mean %v, want %v (mask %v)", tc.impl, got[1].Data, tc.wantMean, mask[1].Data)
		}
	}
}
