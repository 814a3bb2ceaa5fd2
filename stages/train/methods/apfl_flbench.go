package methods

import (
	"errors"
	"math"

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

// alphaStep is FL-bench's update_alpha (src/client/apfl.py:73-88) after a batch, given
// grad, the sum Σ (v − w)·(α·g_v + (1−α)·g_w) over the models after the batch's steps
// (model.APFLOutputMix's Step): α ← clip(α − step·(grad + 0.02·α), 0, 1); step is the
// run's lr.
func alphaStep(alpha, step float32, grad float64) float32 {
	grad += 0.02 * float64(alpha)
	return min(max(alpha-step*float32(grad), 0), 1)
}

func (a *apflFLBench) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	alpha := st.Method.(*apflState).Alpha[c]
	opt := l.Optimizer()
	var w, v tensor.List
	// The model to itself for the client's training (shared in lockstep training): each
	// batch is one compiled step of both models (model.APFLOutputMix).
	err := l.WithModel(func(m *model.Model) error {
		s, err := m.NewAPFLSession(model.APFLOutputMix, st.Global, st.Personal[c], opt)
		if err != nil {
			return err
		}
		defer s.Close()
		err = l.Batches(l.Epochs(), "shuffle", func(e int, x []float32, y []int32) error {
			adapt := a.adaptive && e == 0
			grad, err := s.Step(x, y, alpha, adapt)
			if adapt {
				alpha = alphaStep(alpha, opt.LR, grad)
			}
			return err
		})
		if err != nil {
			return err
		}
		w, v, err = s.Params()
		return err
	})
	if err != nil {
		return train.Upload{}, err
	}
	samples := int64(l.TrainSize()) * int64(l.Epochs())
	l.Count(samples, st.Global) // w's gradients; the mixed gradients of v count once more
	l.Count(samples, nil)
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
