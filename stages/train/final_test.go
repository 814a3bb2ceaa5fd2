package train

import (
	"context"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
)

// TestFinalFromHistory: where FinalFromHistory answers, its rows are EvaluateFinal's (so the
// evaluate stage may skip fine-tuning again), for a global-model method, a personalized one
// and one with its own fine-tuning schedule; it declines DM-PFL+ and incomplete histories.
// The final fine-tuning gives every client the same bits side by side on two
// single-threaded models as one after another on the run's model.
func TestFinalFromHistory(t *testing.T) {
	for _, method := range []string{"fedavg", "fedper", "fedbabu"} {
		r, cfg := methodRun(t, method)
		r.Train.FinetuneEpochs = 1
		st, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		clients := cfg.Assign.Clients()
		got, gotFT, ok := FinalFromHistory(r, st.Metrics, clients)
		if !ok {
			t.Fatalf("%s: no final rows in the history", method)
		}
		models := EvalModels(runMethod(t, r), st, clients)
		m, err := model.NewModel(cfg.Backend, ModelSpec(r, cfg.Data))
		if err != nil {
			t.Fatal(err)
		}
		want, wantFT, err := EvaluateFinal(m, runMethod(t, r), r, cfg.Data, cfg.Assign, models, nil)
		if err != nil {
			t.Fatal(err)
		}
		one, _, err := prepareFinal(m, runMethod(t, r), r, cfg.Data, cfg.Assign, models, 1)
		if err != nil {
			t.Fatal(err)
		}
		two, ft, err := prepareFinal(m, runMethod(t, r), r, cfg.Data, cfg.Assign, models, 2)
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !ft || !reflect.DeepEqual(one, two) || reflect.DeepEqual(one, models) {
			t.Errorf("%s: fine-tuned side by side (%v) differs from one after another, or nothing moved", method, ft)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: history %+v\nEvaluateFinal %+v", method, got, want)
		}
		if gotFT == nil || !reflect.DeepEqual(gotFT, wantFT) {
			t.Errorf("%s: after fine-tuning, history %+v\nEvaluateFinal %+v", method, gotFT, wantFT)
		}
		if _, _, ok := FinalFromHistory(r, st.Metrics[:len(st.Metrics)-1], clients); ok {
			t.Errorf("%s: answered with a client's row missing", method)
		}
	}
	r, _ := methodRun(t, "dmpfl_plus")
	if _, _, ok := FinalFromHistory(r, []Metric{{Round: r.Train.Rounds, Split: "test"}}, 1); ok {
		t.Error("answered for DM-PFL+, whose final evaluation differs from training's")
	}
}

// methodRun is tinyRun with the method's registered defaults, ready to train.
func methodRun(t *testing.T, method string) (*manifest.Run, Config) {
	t.Helper()
	r, ds, a := tinyRun(method)
	r.Params, r.Options = manifest.DefaultParams(method)
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	return r, Config{Run: r, Data: ds, Assign: a, Backend: backend}
}
