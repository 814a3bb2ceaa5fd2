package methods

import (
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/stages/train"
)

func TestAPFL(t *testing.T) {
	zero, _ := run(t, "apfl", map[string]float64{"alpha": 0, "alpha_lr": 0}, 3)
	avg, _ := run(t, "fedavg", nil, 3)
	if !reflect.DeepEqual(zero.Global, avg.Global) || !reflect.DeepEqual(zero.Metrics, avg.Metrics) {
		t.Error("APFL with alpha fixed at 0 differs from FedAvg")
	}
	learned, cfg := run(t, "apfl", map[string]float64{"alpha": 0.5, "alpha_lr": 0.05}, 3)
	moved := false
	for c, v := range learned.Method.(*apflState).Alpha {
		if v < 0 || v > 1 {
			t.Errorf("client %d: alpha %v outside [0, 1]", c, v)
		}
		moved = moved || v != 0.5
	}
	if !moved {
		t.Error("alpha never moved from 0.5")
	}
	if reflect.DeepEqual(learned.Personal[0], initModel(cfg.Run, train.ModelSpec(cfg.Run, cfg.Data))) &&
		reflect.DeepEqual(learned.Personal[1], learned.Personal[0]) {
		t.Error("personal models never trained")
	}
}
