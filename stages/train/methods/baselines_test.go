package methods

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/train"
)

func run(t *testing.T, method string, params map[string]float64, rounds int) (*train.State, train.Config) {
	t.Helper()
	_, cfg := methodRun(t, method, params, nil)
	cfg.Run.Train.Rounds = rounds
	st, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st, cfg
}

func TestFedProxMuZeroIsFedAvg(t *testing.T) {
	prox, _ := run(t, "fedprox", map[string]float64{"mu": 0}, 3)
	avg, _ := run(t, "fedavg", nil, 3)
	if !reflect.DeepEqual(prox.Global, avg.Global) || !reflect.DeepEqual(prox.Metrics, avg.Metrics) {
		t.Error("FedProx with mu = 0 differs from FedAvg")
	}
	pulled, _ := run(t, "fedprox", map[string]float64{"mu": 1}, 3)
	if reflect.DeepEqual(pulled.Global, avg.Global) {
		t.Error("mu = 1 changed nothing")
	}
}

func TestDittoLambdaZeroIsLocal(t *testing.T) {
	d, _ := run(t, "ditto", map[string]float64{"lambda": 0}, 3)
	l, _ := run(t, "local", nil, 3)
	if !reflect.DeepEqual(d.Personal, l.Personal) {
		t.Error("Ditto's personal models with lambda = 0 differ from train.Local training")
	}
}

// tensorsOf returns the tensors of l whose names satisfy keep.
func tensorsOf(l tensor.List, keep func(string) bool) tensor.List {
	var out tensor.List
	for _, t := range l {
		if keep(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

func TestSplitMethodsKeepTheirPartsLocal(t *testing.T) {
	isHead := func(n string) bool { return strings.HasPrefix(n, "classifier.") }
	isBody := func(n string) bool { return !isHead(n) }
	for _, c := range []struct {
		method string
		local  func(string) bool // the part that never leaves the client
	}{
		{"fedper", isHead}, {"fedrep", isHead}, {"lgfedavg", isBody}, {"fedbabu", isHead},
	} {
		// logreg has only a classifier; use an MLP so both parts exist.
		_, cfg := methodRun(t, c.method, map[string]float64{"head_epochs": 1}, nil)
		cfg.Run.Model.Arch, cfg.Run.Model.Hidden = "mlp", []int{8}
		init := initModel(cfg.Run, train.ModelSpec(cfg.Run, cfg.Data))
		st, err := train.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		// The server's copy of the local part never changes: nothing of it is uploaded.
		if !reflect.DeepEqual(tensorsOf(st.Global, c.local), tensorsOf(init, c.local)) {
			t.Errorf("%s: the client-held part reached the server", c.method)
		}
		if reflect.DeepEqual(tensorsOf(st.Global, func(n string) bool { return !c.local(n) }),
			tensorsOf(init, func(n string) bool { return !c.local(n) })) {
			t.Errorf("%s: the shared part never changed", c.method)
		}
		if c.method == "fedbabu" {
			for i, p := range st.Personal {
				if !reflect.DeepEqual(tensorsOf(p, isHead), tensorsOf(init, isHead)) {
					t.Errorf("fedbabu: client %d's head changed during federated training", i)
				}
			}
		}
	}
}

func TestCommunicationAccounting(t *testing.T) {
	avg, cfg := run(t, "fedavg", nil, 2)
	full := train.ModelBytes(train.ModelSpec(cfg.Run, cfg.Data).Init(1))
	loc, _ := run(t, "local", nil, 2)
	per, _ := run(t, "fedper", nil, 2)
	if len(avg.Comm) != 2*3 { // 2 rounds × 3 of 6 clients
		t.Fatalf("%d communication rows", len(avg.Comm))
	}
	for i := range avg.Comm {
		if avg.Comm[i].Down != full || avg.Comm[i].Up != full {
			t.Errorf("fedavg row %+v, want %d each way", avg.Comm[i], full)
		}
		if loc.Comm[i].Down != 0 || loc.Comm[i].Up != 0 {
			t.Errorf("local communicated: %+v", loc.Comm[i])
		}
		// logreg is all head: FedPer keeps all of it.
		if per.Comm[i].Up != 0 {
			t.Errorf("fedper sent its head: %+v", per.Comm[i])
		}
	}
}

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
