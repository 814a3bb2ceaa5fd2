package methods

import (
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
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
	train.Register(manifest.MethodDef{Name: "apfl", Display: "APFL", Cost: manifest.CostIs(2, "every batch: a step of the global model and the gradient of the mixture alpha v + (1 - alpha) w (two forward and backward passes)"), Extension: manifest.ExtensionIs(manifest.ExtendAlways), Personal: true, BNRevision: 2,
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
	v := st.Personal[c].Clone()
	s, err := l.Model().NewSession(st.Global, l.Optimizer())
	if err != nil {
		return train.Upload{}, err
	}
	defer s.Close()
	w := st.Global
	learnV := alpha != 0 || a.alphaLR != 0
	err = l.Batches(l.Epochs(), "shuffle", func(_ int, x []float32, y []int32) error {
		var g tensor.List
		if learnV {
			var err error
			if g, err = l.Model().Gradient(mix(alpha, v, w), x, y); err != nil {
				return err
			}
			// v runs only inside the mixture: its running statistics follow the
			// mixture's training-mode forward pass (none on a model without BatchNorm).
			setStats(v, l.Model().BatchStats())
		}
		if _, err := s.Step(x, y); err != nil {
			return err
		}
		l.Count(int64(len(y)), w) // the step; the gradient of the mixture below counts once more
		if learnV {
			l.Count(int64(len(y)), nil)
		}
		if !learnV {
			return nil
		}
		dot := 0.0
		for t := range v {
			gt, vt, wt := g[g.Find(v[t].Name)].Data, v[t].Data, w[w.Find(v[t].Name)].Data
			for i := range vt {
				dot += float64(vt[i]-wt[i]) * float64(gt[i])
				vt[i] -= l.Optimizer().LR * alpha * gt[i]
			}
		}
		alpha = min(max(alpha-a.alphaLR*float32(dot), 0), 1)
		var err error
		w, err = s.Params()
		return err
	})
	if err != nil {
		return train.Upload{}, err
	}
	trained, err := s.Params()
	if err != nil {
		return train.Upload{}, err
	}
	st.Method.(*apflState).Alpha[c] = alpha
	return train.Upload{Params: trained, Personal: v}, nil
}

func (a apfl) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	for c, u := range uploads {
		st.Personal[c] = u.Personal
	}
	return fedAvg{}.Finish(st, uploads, sizes)
}

func (a apfl) EvalModel(st *train.State, c int) tensor.List {
	return mix(st.Method.(*apflState).Alpha[c], st.Personal[c], st.Global)
}
