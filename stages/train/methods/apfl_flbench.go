package methods

import (
	"errors"
	"math"
	"slices"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// apflFLBench is APFL as FL-bench runs it (impl: flbench; APFLClient in
// uglyghost/FedOBP src/client/apfl.py). Each client keeps a personal model v and
// a mixing weight α (both start as in the paper variant: the initial model, alpha). On
// every batch b of the local epochs, with lr, μ and λ the run's SGD settings and one pair
// of momentum buffers for w and v that starts at zero every round (one optimizer over
// both models, :26; reset_optimizer_on_global_epoch: true):
//
//	g_w = ∇ CE(w(x), y)                                 (:53-56)
//	step(w, g_w)                                        (:57)
//	g_v = ∇_v CE(α·v(x) + (1−α)·w(x), y), w held fixed  (:59-63, the new w)
//	step(w, g_w); step(v, g_v)                          (:64: w's gradient was not zeroed)
//	in the first local epoch only (:66), when alpha adapts:
//	α ← clip(α − lr·(Σ (v − w)·(α·g_v + (1−α)·g_w) + 0.02·α), 0, 1)   (:73-88)
//
// where step(θ, g) is PyTorch's SGD: buf ← μ·buf + g + λ·θ; θ ← θ − lr·buf. On a model
// with BatchNorm every forward pass above runs in train mode: w(x) and v(x) normalize with
// the batch's statistics and move the running statistics, w's twice per batch (:53, :60)
// and v's once (:59) (apfl BatchNorm revision 1; cnn4 has none). The server
// averages the uploaded w by training-set size (src/server/apfl.py:44-52). A client is
// scored on the mixed outputs α·v(x) + (1−α)·w(x) with w the global model (:90-109);
// fine-tuning (the run's finetune_epochs) trains w alone, as FedAvgClient.finetune does
// (src/client/fedavg.py:318-335), and the outputs are mixed again.
//
// The method keeps the run's State from its last Init or Finish (st) for MultiEvaluator:
// the train stage evaluates after Finish with the method that trained. The stages after
// training re-score stored models without it; there, each client's stored model is w.
type apflFLBench struct {
	alpha0   float32
	adaptive bool
	st       *train.State
}

func (a *apflFLBench) Init(st *train.State, clients int) {
	apfl{alpha0: a.alpha0}.Init(st, clients)
	a.st = st
}

// sgd is one PyTorch SGD step of θ with gradient g and momentum buffer buf (both updated).
// BatchNorm running statistics are not trained (FL-bench's `buffers: global` makes them
// parameters without gradients, which SGD skips).
func sgd(opt model.SGD, theta, buf, g tensor.List) {
	for t := range theta {
		if model.IsRunningStat(theta[t].Name) {
			continue
		}
		th, b, gt := theta[t].Data, buf[buf.Find(theta[t].Name)].Data, g[g.Find(theta[t].Name)].Data
		for i := range th {
			b[i] = opt.Momentum*b[i] + gt[i] + opt.WeightDecay*th[i]
			th[i] -= opt.LR * b[i]
		}
	}
}

// updateAlpha is FL-bench's update_alpha (src/client/apfl.py:73-88) after a batch: w and v
// are the models after the batch's steps, gw and gv their gradients; step is the run's lr.
func updateAlpha(alpha, step float32, v, w, gv, gw tensor.List) float32 {
	grad := 0.0
	for t := range v {
		vt, wt := v[t].Data, w[w.Find(v[t].Name)].Data
		gvt, gwt := gv[gv.Find(v[t].Name)].Data, gw[gw.Find(v[t].Name)].Data
		for i := range vt {
			grad += float64(vt[i]-wt[i]) * float64(alpha*gvt[i]+(1-alpha)*gwt[i])
		}
	}
	grad += 0.02 * float64(alpha)
	return min(max(alpha-step*float32(grad), 0), 1)
}

func (a *apflFLBench) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	alpha := st.Method.(*apflState).Alpha[c]
	w, v := st.Global.Clone(), st.Personal[c].Clone()
	bufW, bufV := train.ZeroMask(w), train.ZeroMask(v)
	opt := l.Optimizer()
	err := l.Batches(l.Epochs(), "shuffle", func(e int, x []float32, y []int32) error {
		var gw, gv, statsW, statsV tensor.List
		// The model in turns (shared in lockstep training): w's step, then v's mixed
		// gradient at the new w.
		err := l.WithModel(func(m *model.Model) (err error) {
			if gw, err = m.Gradient(w, x, y); err != nil {
				return err
			}
			statsW = slices.Clone(m.BatchStats()) // the model reuses the list on its next call
			sgd(opt, w, bufW, gw)
			var logits []float32
			if m.HasBatchNorm() {
				// w's second forward pass (:60) runs in train mode too: batch statistics,
				// and its running statistics move again from where the first left them.
				setStats(w, statsW)
				if logits, err = m.TrainLogits(w, x, y); err != nil {
					return err
				}
				statsW = slices.Clone(m.BatchStats())
			} else if logits, err = m.Logits(w, x, len(y)); err != nil {
				return err
			}
			offset := make([]float32, len(logits))
			for i, z := range logits {
				offset[i] = (1 - alpha) * z
			}
			if len(offset) != len(y)*m.Spec().NumClasses {
				return errors.New("APFL: logits of the wrong size")
			}
			if gv, err = m.MixedGradient(v, x, y, alpha, offset); err != nil {
				return err
			}
			statsV = slices.Clone(m.BatchStats())
			return nil
		})
		if err != nil {
			return err
		}
		sgd(opt, w, bufW, gw)
		sgd(opt, v, bufV, gv)
		setStats(w, statsW)
		setStats(v, statsV)
		l.Count(int64(len(y)), w) // w's gradient; the mixed gradient of v counts once more
		l.Count(int64(len(y)), nil)
		if a.adaptive && e == 0 {
			alpha = updateAlpha(alpha, opt.LR, v, w, gv, gw)
		}
		return nil
	})
	if err != nil {
		return train.Upload{}, err
	}
	st.Method.(*apflState).Alpha[c] = alpha
	return train.Upload{Params: w, Personal: v}, nil
}

// ConcurrentClients implements train.ConcurrentClients: Train reads the global model and
// client c's personal model and α, and writes only client c's α, so a round's clients may
// train at the same time (each with its own compiled model through Local.Model).
func (*apflFLBench) ConcurrentClients() bool { return true }

func (a *apflFLBench) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	a.st = st
	return apfl{}.Finish(st, uploads, sizes)
}

// EvalModel is w, the global model: the model FL-bench fine-tunes before it mixes outputs
// again (MultiEvaluator mixes in v and α).
func (a *apflFLBench) EvalModel(st *train.State, _ int) tensor.List { return st.Global }

// MultiEvaluator implements train.MultiModel: client c is scored on α_c·v_c(x) +
// (1−α_c)·w_c(x), w_c its (possibly fine-tuned) evaluation model.
func (a *apflFLBench) MultiEvaluator(m *model.Model, _ func() tensor.List, prepared []tensor.List, _ func(c int, test bool) []float32) (train.Evaluator, error) {
	if a.st == nil {
		return nil, errors.New("APFL (impl flbench) mixes outputs with the run's personal models and weights, which only the train stage holds")
	}
	s := a.st.Method.(*apflState)
	return outputMix{m: m, alpha: s.Alpha, v: a.st.Personal, w: prepared}, nil
}

// outputMix scores client c on the logits α[c]·v[c](x) + (1−α[c])·w[c](x).
type outputMix struct {
	m     *model.Model
	alpha []float32
	v, w  []tensor.List
}

func (o outputMix) Evaluate(c int, x []float32, y []int32) (train.Metric, error) {
	if len(y) == 0 {
		return train.Metric{}, nil
	}
	k := o.m.Spec().NumClasses
	lv, err := o.m.Logits(o.v[c], x, train.EvalBatch)
	if err != nil {
		return train.Metric{}, err
	}
	lw, err := o.m.Logits(o.w[c], x, train.EvalBatch)
	if err != nil {
		return train.Metric{}, err
	}
	alpha := float64(o.alpha[c])
	loss, correct := 0.0, 0
	row := make([]float64, k)
	for i, label := range y {
		best, mx := 0, math.Inf(-1)
		for j := range row {
			row[j] = alpha*float64(lv[i*k+j]) + (1-alpha)*float64(lw[i*k+j])
			if row[j] > row[best] {
				best = j
			}
			mx = math.Max(mx, row[j])
		}
		sum := 0.0
		for _, z := range row {
			sum += math.Exp(z - mx)
		}
		loss += mx + math.Log(sum) - row[label]
		if best == int(label) {
			correct++
		}
	}
	return train.Metric{Loss: loss / float64(len(y)), Accuracy: float64(correct) / float64(len(y)), Samples: len(y)}, nil
}
