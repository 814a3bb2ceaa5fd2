package methods

import (
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// APFLParams are apfl's parameters.
type APFLParams struct {
	Impl    string  `param:"impl" choices:"paper|flbench" doc:"paper: APFL's paper (parameters mixed, alpha updated every step); flbench: FL-bench as FedOBP's tables ran it (src/client/apfl.py): outputs mixed, w stepped twice per batch, v on the run's optimizer, alpha updated in the first local epoch only with step train.lr and a +0.02 alpha term"`
	Alpha   float32 `param:"alpha" default:"0.5" check:"unit" doc:"initial mixing weight (APFL starts at 0.5)"`
	AlphaLR float32 `param:"alpha_lr" default:"0.01" check:"ge0" doc:"paper: step size of alpha's updates (0: alpha stays fixed), not fixed by the paper, FL-bench's default; flbench: 0 keeps alpha fixed (FL-bench's adaptive_alpha 0), any other value adapts it with step train.lr"`
}

func init() {
	// BNRevision 1: impl flbench runs its forward passes in train mode (apflFLBench).
	// BNRevision 2: impl paper moves v's running statistics (apfl.Train).
	// Revision 1: both variants train w and v in one compiled step per batch
	// (model.APFLSession): the sums behind alpha's updates are float32 sums in the graph, and
	// the work is counted once per client rather than once per batch.
	train.Register(manifest.MethodDef{Name: "apfl", Display: "APFL", Cost: apflCost, Extension: manifest.ExtensionIs(manifest.ExtendAlways), Personal: true, Revision: 1, BNRevision: 2,
		Doc: "APFL (Deng et al.): a personal model v and a learned mixing weight alpha per client; evaluated with alpha v + (1 - alpha) w_g."},
		func(p *APFLParams) train.Method {
			if p.Impl == "flbench" {
				return &apflFLBench{alpha0: p.Alpha, adaptive: p.AlphaLR != 0}
			}
			return apfl{alpha0: p.Alpha, alphaLR: p.AlphaLR}
		})
}

// apfl is APFL (Deng et al. 2020): each client keeps a personal model v and a mixing
// weight α and is evaluated with v̄ = α·v + (1−α)·w_g. At every local step on a batch b,
// with the previous iterates w, v, α:
//
//	g = ∇f(v̄; b) with v̄ = α·v + (1−α)·w
//	w ← SGD step of f(w; b)              (the run's optimizer; w is uploaded for FedAvg)
//	v ← v − lr·α·g
//	α ← clip(α − alpha_lr·⟨v − w, g⟩, 0, 1)   (alpha_lr = 0 keeps α fixed)
//
// On a BatchNorm model the paper is silent on running statistics; v's take the values
// the forward pass of v̄ on the batch moved them to, so that α·v + (1−α)·w normalizes
// with statistics of the features the personal model was trained on, and w's move with
// its own steps.
//
// The server averages the uploaded w by training-set size. With α fixed at 0 the global
// model follows FedAvg bit for bit and every client is evaluated with it.
type apfl struct {
	alpha0, alphaLR float32
}

// apflState holds each client's mixing weight α.
type apflState struct{ Alpha []float32 }

// Slots stores each α as a one-element tensor "alpha" in the slot "alpha".
func (s *apflState) Slots() []train.Slot {
	return []train.Slot{{Name: "alpha", Len: len(s.Alpha),
		Get: func(c int) tensor.List {
			return tensor.List{{Name: "alpha", Shape: []int{1}, Data: []float32{s.Alpha[c]}}}
		},
		Set: func(c int, l tensor.List) error {
			if len(l) != 1 || len(l[0].Data) != 1 {
				return fmt.Errorf("APFL's alpha is one value, not %d tensors", len(l))
			}
			s.Alpha[c] = l[0].Data[0]
			return nil
		}}}
}

func (a apfl) Init(st *train.State, clients int) {
	st.Personal = make([]tensor.List, clients)
	s := &apflState{Alpha: make([]float32, clients)}
	st.Method = s
	for c := range st.Personal {
		st.Personal[c] = st.Global
		s.Alpha[c] = a.alpha0
	}
}

// mix returns α·v + (1−α)·w, exactly w when α = 0 and exactly v when α = 1.
func mix(alpha float32, v, w tensor.List) tensor.List {
	switch alpha {
	case 0:
		return w
	case 1:
		return v
	}
	out := w.Clone()
	for t := range out {
		for i, wv := range out[t].Data {
			out[t].Data[i] = alpha*v[t].Data[i] + (1-alpha)*wv
		}
	}
	return out
}

func (a apfl) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	alpha := st.Method.(*apflState).Alpha[c]
	samples := int64(l.TrainSize()) * int64(l.Epochs())
	l.Count(samples, st.Global) // the steps of w
	if alpha == 0 && a.alphaLR == 0 {
		// v̄ = w for good: v never moves, and w trains as FedAvg's model does.
		var trained tensor.List
		err := l.WithModel(func(m *model.Model) (err error) {
			trained, err = trainGlobal(l, m, st.Global)
			return err
		})
		return train.Upload{Params: trained, Personal: st.Personal[c].Clone()}, err
	}
	l.Count(samples, nil) // the gradients of the mixture
	var w, v tensor.List
	// The model to itself for the client's training (shared in lockstep training): each
	// batch is one compiled step of both models (model.APFLParamMix).
	err := l.WithModel(func(m *model.Model) error {
		s, err := m.NewAPFLSession(model.APFLParamMix, st.Global, st.Personal[c], l.Optimizer())
		if err != nil {
			return err
		}
		defer s.Close()
		err = l.Batches(l.Epochs(), "shuffle", func(_ int, x []float32, y []int32) error {
			dot, err := s.Step(x, y, alpha, a.alphaLR != 0)
			alpha = min(max(alpha-a.alphaLR*float32(dot), 0), 1)
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
	st.Method.(*apflState).Alpha[c] = alpha
	return train.Upload{Params: w, Personal: v}, nil
}

// trainGlobal trains w alone on m with the run's optimizer, step after step as
// Session.Step takes them (the loss is not observed, as in APFL's other steps).
func trainGlobal(l *train.Local, m *model.Model, w tensor.List) (tensor.List, error) {
	s, err := m.NewSession(w, l.Optimizer())
	if err != nil {
		return nil, err
	}
	defer s.Close()
	err = l.Batches(l.Epochs(), "shuffle", func(_ int, x []float32, y []int32) error {
		_, err := s.Step(x, y)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.Params()
}

// ConcurrentClients implements train.ConcurrentClients: Train reads the global model and
// client c's personal model and α, and writes only client c's α, so a round's clients may
// train at the same time (each with its own compiled model through Local.WithModel).
func (apfl) ConcurrentClients() bool { return true }

func (a apfl) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	for c, u := range uploads {
		st.Personal[c] = u.Personal
	}
	return fedAvg{}.Finish(st, uploads, sizes)
}

func (a apfl) EvalModel(st *train.State, c int) tensor.List {
	return mix(st.Method.(*apflState).Alpha[c], st.Personal[c], st.Global)
}

// apflCost is APFL's implied cost: two trainings a batch, w's step and the mixture's
// gradient (impl paper), and with impl flbench also the training-mode forward pass at the
// stepped w that v's mixed output needs (a third of a training; model.APFLSession).
func apflCost(c manifest.CostOf) manifest.ImpliedCost {
	if c.Options["impl"] == "flbench" {
		return manifest.ImpliedCost{Multiple: 2 + 1.0/3,
			Why: "every batch: w's step, then a training-mode forward pass at the stepped w (a third of a training) and v's forward and backward through the mixed output"}
	}
	return manifest.ImpliedCost{Multiple: 2, Why: "every batch: a step of the global model and the gradient of the mixture alpha v + (1 - alpha) w (two forward and backward passes)"}
}
