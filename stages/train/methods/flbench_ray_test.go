package methods

import (
	"context"
	"reflect"
	"runtime"
	"testing"

	"github.com/fedpipe/fedpipe/stages/train"
)

// inClientOrder hides a method's ClientChains (and ConcurrentClients) from the loop, which
// then trains a round's clients one at a time in client order, as before chains existed;
// it forwards EndRound, which FedALA's impl flbench needs for its test pass.
type inClientOrder struct{ train.Method }

func (w inClientOrder) EndRound(st *train.State, round int, local func(c int) *train.Local) error {
	if e, ok := w.Method.(train.RoundEnder); ok {
		return e.EndRound(st, round, local)
	}
	return nil
}

// TestRayChainsMatchClientOrder trains the methods whose FL-bench client objects carry state
// from client to client (FedALA and FedDPA with impl flbench) with two workers, every client
// in every round: the workers' chains side by side (3 cores, one model each) and in
// lockstep must give the bits of training the clients one after another in client order,
// each worker's chain reading nothing another writes. Both workers must have served
// clients (6 clients on 2 workers: one serves at least 3 in a row).
func TestRayChainsMatchClientOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	served := map[string]func(st *train.State) int{
		"fedala": func(st *train.State) int { return len(st.Method.(*fedALAState).Workers) },
		"feddpa": func(st *train.State) int {
			n := 0
			for _, h := range st.Method.(*fedDPAFLState).Held {
				if h != nil {
					n++
				}
			}
			return n
		},
	}
	for method, workersServed := range served {
		run := func(hide bool, lockstep bool) *train.State {
			r, cfg := methodRun(t, method, map[string]float64{"workers": 2}, map[string]string{"impl": "flbench"})
			r.Model.Arch, r.Model.Hidden = "mlp", []int{8}
			r.Train.Participation, r.Train.Rounds = 1, 3
			m, err := train.NewRunMethod(r)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := m.(train.ClientChains); !ok {
				t.Fatalf("%s impl flbench does not declare train.ClientChains", method)
			}
			if hide {
				cfg.Method, cfg.ClientWorkers = inClientOrder{m}, 1
			}
			cfg.Lockstep = lockstep
			st, err := train.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		seq := run(true, false)
		if n := workersServed(seq); n != 2 {
			t.Fatalf("%s: %d workers served clients, want 2", method, n)
		}
		for _, lockstep := range []bool{false, true} {
			par := run(false, lockstep)
			if !reflect.DeepEqual(seq.Global, par.Global) || !reflect.DeepEqual(seq.Personal, par.Personal) ||
				!reflect.DeepEqual(seq.Masks, par.Masks) || !reflect.DeepEqual(seq.Method, par.Method) ||
				!reflect.DeepEqual(seq.Metrics, par.Metrics) || !reflect.DeepEqual(seq.Work, par.Work) {
				t.Errorf("%s, lockstep %v: the workers' chains side by side differ from the clients one after another", method, lockstep)
			}
		}
	}
}
