package methods

import (
	"context"
	"reflect"
	"runtime"
	"testing"

	"github.com/fedpipe/fedpipe/stages/train"
)

// TestConcurrentClientsMatchSequential trains each method that declares ConcurrentClients
// (or ClientChains: its chains side by side) with its round's clients side by side (3 at a time), in lockstep (train.Config.Lockstep:
// one compiled step for all of them) and one after another, and requires the same bits
// everywhere: models, masks, metrics, communication and work rows. The other
// methods train one client at a time either way but fine-tune side by side to be evaluated.
func TestConcurrentClientsMatchSequential(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	for _, c := range []struct {
		method string
		params map[string]float64
		opts   map[string]string
	}{
		{"fedavg", nil, nil},
		{"fedprox", map[string]float64{"mu": 0.1}, nil},
		{"local", nil, nil},
		{"fedobp", map[string]float64{"q": 0.9}, nil},
		{"fedobp", map[string]float64{"q": 0.9, "ema": 0.5}, map[string]string{"score": "fisher"}},
		{"fedper", nil, nil},
		{"fedrep", nil, nil},
		{"lgfedavg", nil, nil},
		{"apfl", nil, nil},
		{"apfl", nil, map[string]string{"impl": "flbench"}},
		{"flute", nil, map[string]string{"impl": "flbench"}},
		{"floco", map[string]float64{"tau": 2}, nil},
		{"floco", map[string]float64{"tau": 2}, map[string]string{"impl": "flbench"}},
		{"fedselect", nil, nil},
		{"fedselect", nil, map[string]string{"variant": "official"}},
		{"fedala", nil, nil},
		{"ditto", nil, nil},
		{"dmpfl", nil, nil},
		{"dmpfl", map[string]float64{"readjust_every": 1}, nil},
		{"dmpfl_plus", map[string]float64{"readjust_every": 1}, nil},
		{"feddst", map[string]float64{"readjust_every": 1}, nil},
		// Chains (train.ClientChains): each worker's clients one after another.
		{"fedala", nil, map[string]string{"impl": "flbench"}},
		{"feddpa", nil, map[string]string{"impl": "flbench"}},
		// Clients one after another in training, side by side when fine-tuned to be evaluated.
		{"fedbabu", nil, nil},
	} {
		run := func(workers int, lockstep bool) *train.State {
			r, cfg := methodRun(t, c.method, c.params, c.opts)
			r.Train.Participation, r.Train.Rounds, r.Train.FinetuneEpochs = 1, 3, 1
			cfg.ClientWorkers, cfg.Lockstep = workers, lockstep
			st, err := train.Run(context.Background(), cfg)
			if err != nil {
				t.Fatalf("%s: %v", c.method, err)
			}
			return st
		}
		seq := run(1, false)
		for _, other := range []struct {
			how string
			st  *train.State
		}{{"side by side", run(0, false)}, {"in lockstep", run(0, true)}} {
			par := other.st
			if !reflect.DeepEqual(seq.Global, par.Global) || !reflect.DeepEqual(seq.Personal, par.Personal) ||
				!reflect.DeepEqual(seq.Masks, par.Masks) || !reflect.DeepEqual(seq.Metrics, par.Metrics) ||
				!reflect.DeepEqual(seq.Comm, par.Comm) || !reflect.DeepEqual(seq.Work, par.Work) ||
				!reflect.DeepEqual(seq.Method, par.Method) {
				t.Errorf("%s %v %v: clients trained %s differ from one after another", c.method, c.params, c.opts, other.how)
			}
		}
	}
}
