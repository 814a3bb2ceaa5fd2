package train

import (
	"context"
	"fmt"
	"runtime"
	"slices"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
)

// EvalBatch is the batch size of evaluation.
const EvalBatch = 256

// evalOptions say how clients are evaluated.
type evalOptions struct {
	method     Method
	finetune   int // local epochs of fine-tuning before evaluating (not kept)
	batch      int
	opt        model.SGD
	seed       int64
	aug        *augmenter  // fine-tuning augments like training
	trainSplit bool        // also evaluate the training split (train.eval_train_split)
	pool       *clientPool // fine-tunes clients side by side (nil: one after another)
	// lock, when set, fine-tunes every client in lockstep instead (see lockGroup).
	lock *lockSource
}

// mayTune reports whether an evaluation may fine-tune: the run's finetune_epochs or the
// method's own Finetuner.
func (o evalOptions) mayTune() bool {
	_, own := optional[Finetuner](o.method)
	return o.finetune != 0 || own
}

// tuningPool is the pool an evaluation spreads its clients over: fine-tuning a copy reads
// nothing but the client's model and data, whatever the method; without fine-tuning there
// is nothing to spread (nil: one client after another).
func (o evalOptions) tuningPool() *clientPool {
	if !o.mayTune() {
		return nil
	}
	return o.pool
}

// tuningLock is where an evaluation's lockstep fine-tuning groups come from, nil when it
// does not fine-tune in lockstep (no lockstep, or nothing to fine-tune).
func (o evalOptions) tuningLock() *lockSource {
	if !o.mayTune() {
		return nil
	}
	return o.lock
}

// evalData returns the splits of client c an evaluation scores: its test split, and its
// training split only with trainSplit.
func (o evalOptions) evalData(cs clientSet, c int) clientData {
	var cd clientData
	if o.trainSplit {
		cd = cs.train(c)
	}
	cd.testX, cd.testY = cs.test(c)
	return cd
}

func evalOpts(r *manifest.Run, opt model.SGD, method Method) evalOptions {
	return evalOptions{method: method, finetune: r.Train.FinetuneEpochs, batch: r.Train.BatchSize, opt: opt, seed: r.Seed, trainSplit: r.Train.EvalTrainSplit}
}

// prepare returns the model client c is evaluated with after fine-tuning: its evaluation
// model fine-tuned for the configured epochs on its training data (stream "finetune"),
// and false when the run does not fine-tune (then p itself). Fine-tuning never changes
// the state.
func (o evalOptions) prepare(m *model.Model, p tensor.List, cs clientSet, round, c int, group *lockGroup) (tensor.List, bool, error) {
	epochs, mask := o.finetune, tensor.List(nil)
	if f, ok := optional[Finetuner](o.method); ok {
		if e, mk, own := f.Finetune(p); own {
			epochs, mask = e, mk
		}
	}
	if epochs == 0 {
		return p, false, nil
	}
	l := &Local{model: m, opt: o.opt, data: cs.train(c), epochs: epochs, batch: o.batch, seed: o.seed, round: round, client: c, aug: o.aug,
		group: group}
	ft, err := l.Fit(p, Fit{Mask: mask, Stream: "finetune"})
	return ft, true, err
}

// evaluateAll evaluates every client after round on its test split with the model the
// method holds ("test") and, for runs that fine-tune, on its test split again with a
// fine-tuned copy (SplitTestFT), as FL-bench does at every evaluation. The training split
// ("train") is evaluated too only with train.eval_train_split: nothing downstream reads it.
func evaluateAll(ctx context.Context, m *model.Model, method Method, st *State, cs clientSet, round int, o evalOptions) ([]Metric, error) {
	if _, multi := optional[MultiModel](method); !multi {
		return evaluateEach(ctx, m, method, st, cs, round, o)
	}
	var rows []Metric
	n := cs.n()
	held := make([]tensor.List, n)
	prepared := make([]tensor.List, n)
	ft := make([]bool, n)
	for c := range n {
		held[c] = method.EvalModel(st, c)
	}
	err := spread(ctx, o.tuningPool(), m, o.tuningLock(), o.opt, n, cs.trainSize, func(c int, m *model.Model, group *lockGroup) error {
		var err error
		if prepared[c], ft[c], err = o.prepare(m, held[c], cs, round, c, group); err != nil {
			return fmt.Errorf("fine-tuning client %d: %w", c, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	finetuned := slices.Contains(ft, true)
	evaluator := func(models []tensor.List) (Evaluator, error) {
		mm, ok := optional[MultiModel](method)
		if !ok {
			return scoring(method, PlainEvaluator(m, models), o.batch), nil
		}
		global := func() tensor.List {
			if g, ok := optional[GlobalEvaluator](method); ok {
				return g.EvalGlobal(st)
			}
			return st.Global
		}
		return mm.MultiEvaluator(m, global, models, func(c int, test bool) []float32 {
			if test {
				x, _ := cs.test(c)
				return x
			}
			return cs.train(c).trainX
		})
	}
	ev, err := evaluator(held)
	if err != nil {
		return nil, err
	}
	var evFT Evaluator
	if finetuned {
		if evFT, err = evaluator(prepared); err != nil {
			return nil, err
		}
	}
	for c := range n {
		cd := o.evalData(cs, c)
		for _, split := range []struct {
			name string
			ev   Evaluator
			x    []float32
			y    []int32
		}{{"train", ev, cd.trainX, cd.trainY}, {"test", ev, cd.testX, cd.testY}, {SplitTestFT, evFT, cd.testX, cd.testY}} {
			if split.ev == nil || (split.name == "train" && !o.trainSplit) {
				continue
			}
			row, err := split.ev.Evaluate(c, split.x, split.y)
			if err != nil {
				return nil, fmt.Errorf("evaluating client %d: %w", c, err)
			}
			row.Round, row.Client, row.Split = round, c, split.name
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// evaluateEach is evaluateAll for methods that score a client with one model: each client's
// model is fine-tuned and scored on its own (side by side where the run fine-tunes), and
// dropped, so an evaluation holds a few clients' models rather than every client's model and
// fine-tuned copy (100 FedOBP clients: about 460 MB). The rows are evaluateAll's, in the same
// order: a model is scored the same on any of the pool's models (fpfast's results do not
// depend on threads).
func evaluateEach(ctx context.Context, m *model.Model, method Method, st *State, cs clientSet, round int, o evalOptions) ([]Metric, error) {
	n := cs.n()
	pool := o.tuningPool()
	mayTune := o.mayTune()
	type result struct {
		rows []Metric // train (with trainSplit), test
		ft   Metric   // test after fine-tuning (the held model's test row if it did not)
		did  bool     // fine-tuned
	}
	res := make([]result, n)
	// In lockstep every client runs at once and fine-tunes in one step; scoring takes turns
	// on the shared model.
	err := spread(ctx, pool, m, o.tuningLock(), o.opt, n, cs.trainSize, func(c int, mw *model.Model, group *lockGroup) error {
		held := method.EvalModel(st, c)
		cd := o.evalData(cs, c)
		score := func(p tensor.List, split string, x []float32, y []int32) (row Metric, err error) {
			err = group.exclusive(func() (err error) {
				row, err = scoring(method, single{mw, p}, o.batch).Evaluate(c, x, y)
				return err
			})
			if err != nil {
				return row, fmt.Errorf("evaluating client %d: %w", c, err)
			}
			row.Round, row.Client, row.Split = round, c, split
			return row, nil
		}
		r := &res[c]
		if o.trainSplit {
			row, err := score(held, "train", cd.trainX, cd.trainY)
			if err != nil {
				return err
			}
			r.rows = append(r.rows, row)
		}
		row, err := score(held, "test", cd.testX, cd.testY)
		if err != nil {
			return err
		}
		r.rows = append(r.rows, row)
		if !mayTune {
			return nil
		}
		prepared, did, err := o.prepare(mw, held, cs, round, c, group)
		if err != nil {
			return fmt.Errorf("fine-tuning client %d: %w", c, err)
		}
		r.did, r.ft = did, row
		r.ft.Split = SplitTestFT
		if did {
			r.ft, err = score(prepared, SplitTestFT, cd.testX, cd.testY)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	finetuned := false
	for _, r := range res {
		finetuned = finetuned || r.did
	}
	var rows []Metric
	for _, r := range res {
		rows = append(rows, r.rows...)
		if finetuned {
			rows = append(rows, r.ft)
		}
	}
	return rows, nil
}

// single scores every client with one model (evaluateEach's evaluator of one client).
type single struct {
	m *model.Model
	p tensor.List
}

func (s single) Evaluate(_ int, x []float32, y []int32) (Metric, error) {
	return Evaluate(s.m, s.p, x, y)
}

// PrepareFinal returns the models the clients are finally evaluated with after
// fine-tuning (with the same streams as the last round's evaluation in training), and
// false, with the final models themselves, when the run does not fine-tune. method is the
// run's method as NewRunMethod builds it.
func PrepareFinal(m *model.Model, method Method, r *manifest.Run, ds *data.Dataset, a *partition.Assignment, models []tensor.List) ([]tensor.List, bool, error) {
	return prepareFinal(m, method, r, ds, a, models, runtime.GOMAXPROCS(0))
}

// prepareFinal is PrepareFinal with the clients fine-tuned side by side on up to workers
// single-threaded models (largest first, as an evaluation in training does), or one after
// another on m: the same bits either way.
func prepareFinal(m *model.Model, method Method, r *manifest.Run, ds *data.Dataset, a *partition.Assignment, models []tensor.List, workers int) ([]tensor.List, bool, error) {
	cs := clientSet{d: ds, a: a}
	var err error
	o := evalOpts(r, model.SGD{LR: float32(r.Train.LR), Momentum: float32(r.Train.Momentum), WeightDecay: float32(r.Train.WeightDecay)}, method)
	if o.aug, err = newAugmenter(r.Train, ds); err != nil {
		return nil, false, err
	}
	out := make([]tensor.List, cs.n())
	ft := make([]bool, cs.n())
	var pool *clientPool
	if o.mayTune() {
		pool = newClientPool(m.Backend(), m.Spec(), workers)
		defer pool.Close()
	}
	err = pool.run(context.Background(), m, cs.n(), cs.trainSize, func(c int, mw *model.Model) error {
		var err error
		if out[c], ft[c], err = o.prepare(mw, models[c], cs, r.Train.Rounds, c, nil); err != nil {
			return fmt.Errorf("fine-tuning client %d: %w", c, err)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, slices.Contains(ft, true), nil
}

// EvaluateFinal evaluates the final models on each client's test split: before
// fine-tuning (the models as they are), and after (nil when the run does not fine-tune).
// See FinalEvaluator; global only for methods that need it.
func EvaluateFinal(m *model.Model, method Method, r *manifest.Run, ds *data.Dataset, a *partition.Assignment, models []tensor.List, global tensor.List) (before, after []Metric, err error) {
	prepared, finetuned, err := PrepareFinal(m, method, r, ds, a, models)
	if err != nil {
		return nil, nil, err
	}
	score := func(models []tensor.List) ([]Metric, error) {
		ev, err := evaluatorOf(m, method, r, ds, a, models, global)
		if err != nil {
			return nil, err
		}
		rows := make([]Metric, len(models))
		for c := range models {
			x, y := ds.Gather(a.Test[c])
			row, err := ev.Evaluate(c, x, y)
			if err != nil {
				return nil, err
			}
			row.Round, row.Client, row.Split = r.Train.Rounds, c, "test"
			rows[c] = row
		}
		return rows, nil
	}
	if before, err = score(models); err != nil || !finetuned {
		return before, nil, err
	}
	after, err = score(prepared)
	return before, after, err
}

// Evaluate computes the mean loss and accuracy of params on (x, y).
func Evaluate(m *model.Model, params tensor.List, x []float32, y []int32) (Metric, error) {
	if len(y) == 0 {
		return Metric{}, nil
	}
	sum, correct, err := m.Evaluate(params, x, y, EvalBatch)
	if err != nil {
		return Metric{}, err
	}
	return Metric{Loss: sum / float64(len(y)), Accuracy: float64(correct) / float64(len(y)), Samples: len(y)}, nil
}

// MeanAccuracy is the unweighted mean over clients of the accuracy rows of one split.
func MeanAccuracy(rows []Metric, split string) float64 {
	s, n := 0.0, 0
	for _, r := range rows {
		if r.Split == split {
			s += r.Accuracy
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// EvalModels returns, for each of the clients, the model method (the run's, as
// NewRunMethod builds it) evaluates it with at the end of a run in state st.
func EvalModels(method Method, st *State, clients int) []tensor.List {
	out := make([]tensor.List, clients)
	EachEvalModel(method, st, clients, func(c int, m tensor.List) { out[c] = m })
	return out
}

// EachEvalModel is EvalModels passing each client's model to fn in client order instead of
// keeping them all.
func EachEvalModel(method Method, st *State, clients int, fn func(c int, m tensor.List)) {
	for c := range clients {
		fn(c, method.EvalModel(st, c))
	}
}
