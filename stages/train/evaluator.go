package train

import (
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
)

// Evaluator scores client c's final model(s) on samples (x, y). The evaluate and shift
// stages use one, so a method that infers with more than one model (DM-PFL+) is scored
// the same way on unshifted and shifted data.
type Evaluator interface {
	Evaluate(c int, x []float32, y []int32) (Metric, error)
}

// EvalGlobal returns the global model method m infers with beside the personal ones, and
// false for methods that have none of their own.
func EvalGlobal(m Method, st *State) (tensor.List, bool) {
	if g, ok := optional[GlobalEvaluator](m); ok {
		return g.EvalGlobal(st), true
	}
	return nil, false
}

// NeedsGlobal reports whether a run's evaluation needs the global model beside each
// client's: its method declares so (manifest.MethodDef.NeedsGlobal; DM-PFL+'s adaptive
// inference).
func NeedsGlobal(r *manifest.Run) bool {
	def, _ := manifest.LookupMethod(r.Method)
	return def.NeedsGlobal
}

// PerBatchEvaluator scores a client by the unweighted mean of ev's accuracies on
// consecutive batches of batch samples (the last may be short); loss is the per-sample
// mean over all of them, and samples their count. With batch ≤ 0 it is ev.
func PerBatchEvaluator(ev Evaluator, batch int) Evaluator {
	if batch <= 0 {
		return ev
	}
	return batchMean{ev, batch}
}

// batchMean is PerBatchEvaluator's evaluator.
type batchMean struct {
	ev    Evaluator
	batch int
}

func (b batchMean) Evaluate(c int, x []float32, y []int32) (Metric, error) {
	n := len(y)
	if n == 0 {
		return b.ev.Evaluate(c, x, y)
	}
	per := len(x) / n
	var acc, loss float64
	batches := 0
	for i := 0; i < n; i += b.batch {
		j := min(i+b.batch, n)
		r, err := b.ev.Evaluate(c, x[i*per:j*per], y[i:j])
		if err != nil {
			return Metric{}, err
		}
		acc += r.Accuracy
		loss += r.Loss * float64(j-i)
		batches++
	}
	return Metric{Loss: loss / float64(n), Accuracy: acc / float64(batches), Samples: n}, nil
}

// scoring wraps ev in PerBatchEvaluator when method scores a run per batch.
func scoring(method Method, ev Evaluator, batch int) Evaluator {
	if b, ok := optional[BatchMeanAccuracy](method); ok && b.PerBatchAccuracy() {
		return PerBatchEvaluator(ev, batch)
	}
	return ev
}

// PlainEvaluator scores each client c with models[c].
func PlainEvaluator(m *model.Model, models []tensor.List) Evaluator { return plain{m, models} }

// plain scores one model per client.
type plain struct {
	m      *model.Model
	models []tensor.List
}

func (p plain) Evaluate(c int, x []float32, y []int32) (Metric, error) {
	return Evaluate(p.m, p.models[c], x, y)
}

// FinalEvaluator returns the evaluator of a run's final models after fine-tuning when the
// run fine-tunes (see PrepareFinal; the shift stage's protocol); global is the run's
// global model (EvalGlobal), needed when NeedsGlobal(r). method is the run's method as
// NewRunMethod builds it.
func FinalEvaluator(m *model.Model, method Method, r *manifest.Run, ds *data.Dataset, a *partition.Assignment, models []tensor.List, global tensor.List) (Evaluator, error) {
	prepared, _, err := PrepareFinal(m, method, r, ds, a, models)
	if err != nil {
		return nil, err
	}
	return evaluatorOf(m, method, r, ds, a, prepared, global)
}

// evaluatorOf returns the evaluator of the given client models as they are.
func evaluatorOf(m *model.Model, method Method, r *manifest.Run, ds *data.Dataset, a *partition.Assignment, prepared []tensor.List, global tensor.List) (Evaluator, error) {
	if !NeedsGlobal(r) {
		return scoring(method, PlainEvaluator(m, prepared), r.Train.BatchSize), nil
	}
	if global == nil {
		return nil, fmt.Errorf("%s needs the global model, which the train stage did not store", r.Method)
	}
	mm, ok := optional[MultiModel](method)
	if !ok {
		return nil, fmt.Errorf("%s declares that it needs the global model but has no evaluator of its own", r.Method)
	}
	return mm.MultiEvaluator(m, func() tensor.List { return global }, prepared, func(c int, test bool) []float32 {
		idx := a.Train[c]
		if test {
			idx = a.Test[c]
		}
		x, _ := ds.Gather(idx)
		return x
	})
}
