package methods

import (
	"context"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/train"
)

func TestPerLayerThresholdAndFedDPA(t *testing.T) {
	score := tensor.List{
		{Name: "fc1.weight", Shape: []int{4}, Data: []float32{1, 2, 3, 4}},
		{Name: "classifier.weight", Shape: []int{4}, Data: []float32{10, 20, 30, 40}},
	}
	// Per tensor, q = 0.5 → τ = 2.5 and 25: the top two of each.
	mask := (&fedOBP{q: 0.5, perLayer: true}).selectMask(score)
	if want := []float32{0, 0, 1, 1}; !reflect.DeepEqual(mask[0].Data, want) || !reflect.DeepEqual(mask[1].Data, want) {
		t.Errorf("per-layer mask %v", mask)
	}
	// One global threshold would keep only the classifier.
	if mask := (&fedOBP{q: 0.5}).selectMask(score); !reflect.DeepEqual(mask[0].Data, []float32{0, 0, 0, 0}) {
		t.Errorf("global mask %v", mask)
	}
	_, cfg := methodRun(t, "feddpa", nil, nil)
	cfg.Run.Train.Rounds = 3
	cfg.Run.Train.Participation = 1
	st, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// After round 1 every client has trained, so rounds 2 and 3 keep about 60% of each
	// tensor (entries above its 0.4-quantile of Fisher information).
	for _, s := range st.Selection {
		if s.Round < 2 {
			continue
		}
		frac := float64(s.Personalized) / float64(s.Total)
		if frac < 0.4 || frac > 0.61 {
			t.Errorf("round %d client %d %s: %.2f personalized", s.Round, s.Client, s.Tensor, frac)
		}
	}
}
