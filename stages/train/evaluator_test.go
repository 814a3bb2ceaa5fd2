package train

import (
	"context"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
)

// The evaluate stage's final figures equal the training loop's last evaluation, with and
// without fine-tuning, and fine-tuning changes them.
func TestFinalEvaluationMatchesLastRound(t *testing.T) {
	var first []Metric
	for _, ft := range []int{0, 1} {
		r, ds, a := tinyRun("fedobp")
		r.Params, r.Options = manifest.DefaultParams("fedobp")
		r.Params["q"] = 0.9
		backend, err := model.ResolveBackend("")
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Run: r, Data: ds, Assign: a, Backend: backend}
		r.Train.FinetuneEpochs = ft
		st, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		models, err := EvalModels(r, st, cfg.Assign.Clients())
		if err != nil {
			t.Fatal(err)
		}
		m, err := model.NewModel(cfg.Backend, ModelSpec(r, cfg.Data))
		if err != nil {
			t.Fatal(err)
		}
		final, err := EvaluateFinal(m, r, cfg.Data, cfg.Assign, models, nil)
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		var last []Metric
		for _, row := range st.Metrics {
			if row.Round == r.Train.Rounds && row.Split == "test" {
				last = append(last, row)
			}
		}
		if !reflect.DeepEqual(last, final) {
			t.Errorf("finetune %d: evaluate stage %+v\ntraining's last round %+v", ft, final, last)
		}
		if ft == 0 {
			first = final
		} else if reflect.DeepEqual(first, final) {
			t.Error("fine-tuning changed nothing")
		}
	}
}
