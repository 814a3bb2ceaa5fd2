package train

import (
	"context"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
)

// The evaluate stage's final figures equal the training loop's last evaluation, before and
// after fine-tuning; before fine-tuning equals a plain evaluation (the run without
// fine-tuning), and fine-tuning changes the after figures.
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
		models := EvalModels(runMethod(t, r), st, cfg.Assign.Clients())
		m, err := model.NewModel(cfg.Backend, ModelSpec(r, cfg.Data))
		if err != nil {
			t.Fatal(err)
		}
		final, after, err := EvaluateFinal(m, runMethod(t, r), r, cfg.Data, cfg.Assign, models, nil)
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		var last, lastFT []Metric
		for _, row := range st.Metrics {
			if row.Round == r.Train.Rounds && row.Split == "test" {
				last = append(last, row)
			}
			if row.Round == r.Train.Rounds && row.Split == SplitTestFT {
				row.Split = "test"
				lastFT = append(lastFT, row)
			}
		}
		if !reflect.DeepEqual(last, final) {
			t.Errorf("finetune %d: evaluate stage %+v\ntraining's last round %+v", ft, final, last)
		}
		if !reflect.DeepEqual(lastFT, after) {
			t.Errorf("finetune %d: evaluate stage after fine-tuning %+v\ntraining's last round %+v", ft, after, lastFT)
		}
		switch {
		case ft == 0 && after != nil:
			t.Error("figures after fine-tuning of a run that does not fine-tune")
		case ft == 0:
			first = final
		case !reflect.DeepEqual(first, final):
			// Before fine-tuning is a plain evaluation of the model the method holds.
			t.Errorf("before fine-tuning %+v differs from the run without fine-tuning %+v", final, first)
		case reflect.DeepEqual(first, after):
			t.Error("fine-tuning changed nothing")
		}
	}
}

// countEvaluator scores a sample correct when its label is 1; its loss is the label.
type countEvaluator struct{ calls [][]int32 }

func (e *countEvaluator) Evaluate(c int, x []float32, y []int32) (Metric, error) {
	e.calls = append(e.calls, y)
	correct, loss := 0, 0.0
	for _, v := range y {
		if v == 1 {
			correct++
		}
		loss += float64(v)
	}
	return Metric{Loss: loss / float64(len(y)), Accuracy: float64(correct) / float64(len(y)), Samples: len(y)}, nil
}

func TestPerBatchEvaluatorAveragesBatches(t *testing.T) {
	y := []int32{1, 1, 0, 1, 0} // batches of 2: {1,1} {0,1} {0}
	x := make([]float32, 2*len(y))
	inner := &countEvaluator{}
	got, err := PerBatchEvaluator(inner, 2).Evaluate(0, x, y)
	if err != nil {
		t.Fatal(err)
	}
	if want := (1.0 + 0.5 + 0.0) / 3; got.Accuracy != want {
		t.Errorf("accuracy %v, want the mean of the batches' %v", got.Accuracy, want)
	}
	if got.Loss != 0.6 || got.Samples != 5 {
		t.Errorf("loss %v over %d samples, want the per-sample mean 0.6 over 5", got.Loss, got.Samples)
	}
	if len(inner.calls) != 3 || len(inner.calls[2]) != 1 {
		t.Errorf("batches %v, want sizes 2, 2, 1 in order", inner.calls)
	}
	plain, _ := PerBatchEvaluator(inner, 0).Evaluate(0, x, y)
	if plain.Accuracy != 0.6 {
		t.Errorf("batch 0: accuracy %v, want the per-sample 0.6", plain.Accuracy)
	}
}
