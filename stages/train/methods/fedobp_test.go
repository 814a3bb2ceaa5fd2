package methods

import (
	"context"
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
