package methods

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/stages/train"
)

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
