package methods

import (
	"math"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// Every method of the catalogue is implemented, runs with its defaults on a model with a
// body and a head, and is deterministic: two runs give identical states' metrics and
// communication.
func TestEveryCatalogueMethodRunsDeterministically(t *testing.T) {
	for _, name := range manifest.MethodNames() {
		a, _ := runMLP(t, name, nil, nil, 2)
		b, _ := runMLP(t, name, nil, nil, 2)
		if len(a.Metrics) == 0 || len(a.Comm) == 0 {
			t.Errorf("%s: no metrics or communication rows", name)
		}
		for _, m := range a.Metrics {
			if math.IsNaN(m.Loss) || m.Accuracy < 0 || m.Accuracy > 1 {
				t.Errorf("%s: bad metric row %+v", name, m)
			}
		}
		if !reflect.DeepEqual(a.Metrics, b.Metrics) || !reflect.DeepEqual(a.Comm, b.Comm) || !reflect.DeepEqual(a.Global, b.Global) {
			t.Errorf("%s: two identical runs differ", name)
		}
	}
}

func TestNewMethodsCommunication(t *testing.T) {
	_, cfg := methodRun(t, "fedavg", nil, nil)
	cfg.Run.Model.Arch, cfg.Run.Model.Hidden = "mlp", []int{8}
	init := train.ModelSpec(cfg.Run, cfg.Data).Init(1)
	full := train.ModelBytes(init)
	head := train.ModelBytes(tensorsOf(init, isClassifier))
	body := full - head
	classes, d := int64(cfg.Data.Classes), int64(8)
	check := func(name string, params map[string]float64, want func(round int, c train.Comm) bool) {
		st, _ := runMLP(t, name, params, nil, 3)
		for _, c := range st.Comm {
			if !want(c.Round, c) {
				t.Errorf("%s: communication row %+v (model %d B, head %d B)", name, c, full, head)
			}
		}
	}
	check("lotteryfl", map[string]float64{"target_sparsity": 0}, func(_ int, c train.Comm) bool { return c.Down == full && c.Up == full })
	check("lotteryfl", map[string]float64{"acc_threshold": 0}, func(_ int, c train.Comm) bool { return c.Down < full && c.Up > c.Down })
	check("fedala", nil, func(_ int, c train.Comm) bool { return c.Down == full && c.Up == full })
	check("flute", nil, func(_ int, c train.Comm) bool { return c.Down == body && c.Up == body })
	check("floco", map[string]float64{"endpoints": 3, "tau": 100}, func(_ int, c train.Comm) bool { return c.Down == body+3*head && c.Up == c.Down })
	stats := 4 * (classes*d + d*d) // pFedFDA's class means and covariance
	check("pfedfda", nil, func(_ int, c train.Comm) bool { return c.Down == full+stats && c.Up == full+stats })
	check("fedpac", nil, func(round int, c train.Comm) bool {
		cent := int64(0)
		if round > 1 {
			cent = 4 * (classes*d + classes)
		}
		return c.Down == full+cent && c.Up == full+4*(2*classes*d+classes+1)
	})
}
