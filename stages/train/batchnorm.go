package train

import (
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
)

// NewRunMethod returns the run's method (NewMethod), wrapped so that each client keeps
// its own BatchNorm tensors when the model has BatchNorm and the manifest asks for it:
// model.bn_stats: local keeps the running statistics out of aggregation (the default, as
// the official FedSelect code: its running statistics are never averaged), and
// model.bn_params: personal does the same for BatchNorm's scale and shift. It is the one
// way a run's method is made: each stage builds it once (stages/train_kind.go, and
// stages/stages.go's loadFinal for the evaluate and shift stages) and hands it to what
// needs it (Config.Method, DecodeState, EachEvalModel, EvalGlobal, PrepareFinal, …).
func NewRunMethod(r *manifest.Run) (Method, error) {
	m, err := NewMethod(r)
	if err != nil {
		return nil, err
	}
	if !r.Model.HasBatchNorm() {
		return m, nil
	}
	keep := bnKeep{Method: m, stats: r.Model.BNStats != "averaged", affine: r.Model.BNParams == "personal"}
	if !keep.stats && !keep.affine {
		return m, nil
	}
	return keep, nil
}

// PersonalModels reports whether the clients of a run end with models of their own: the
// method keeps personal models, or the clients keep their own BatchNorm tensors.
func PersonalModels(r *manifest.Run) bool {
	if def, _ := manifest.LookupMethod(r.Method); def.Personal {
		return true
	}
	return r.Model.HasBatchNorm() && (r.Model.BNStats != "averaged" || r.Model.BNParams == "personal")
}

// bnKeep wraps a method: the server aggregates as the method says, but every client that
// has trained starts each round from, and is evaluated with, the method's model with its
// own BatchNorm tensors put back (its running statistics; with affine also γ and β). A
// client that never trained uses the method's values (the average, for averaging methods).
// The tensors live in State.BN, so checkpoints keep them.
//
// Optional interfaces of the wrapped method (Communicator, Finetuner, ...) are found
// through optional, not forwarded one by one.
type bnKeep struct {
	Method
	stats, affine bool
}

// kept reports whether the tensor called name in l is one a client keeps.
func (b bnKeep) kept(name string, l tensor.List) bool {
	if model.IsRunningStat(name) {
		return b.stats
	}
	if !b.affine {
		return false
	}
	for _, suffix := range []string{".weight", ".bias"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			return l.Find(base+".running_mean") >= 0
		}
	}
	return false
}

// own returns copies of the tensors of l a client keeps.
func (b bnKeep) own(l tensor.List) tensor.List {
	var out tensor.List
	for _, t := range l {
		if b.kept(t.Name, l) {
			out = append(out, t.Clone())
		}
	}
	return out
}

// overlay returns l with the tensors of own in place of its own (a new list; l unchanged).
func overlay(l, own tensor.List) tensor.List {
	if own == nil || l == nil {
		return l
	}
	out := append(tensor.List(nil), l...)
	for _, t := range own {
		if i := out.Find(t.Name); i >= 0 {
			out[i] = t.Clone()
		}
	}
	return out
}

func (b bnKeep) Init(st *State, clients int) {
	b.Method.Init(st, clients)
	st.BN = make([]tensor.List, clients)
}

func (b bnKeep) Train(l *Local, st *State, c int) (Upload, error) {
	own := st.BN[c]
	global := st.Global
	st.Global = overlay(global, own)
	if st.Personal != nil {
		st.Personal[c] = overlay(st.Personal[c], own)
	}
	u, err := b.Method.Train(l, st, c)
	st.Global = global
	if err != nil {
		return u, err
	}
	st.BN[c] = b.own(u.Params)
	return u, nil
}

func (b bnKeep) EvalModel(st *State, c int) tensor.List {
	return overlay(b.Method.EvalModel(st, c), st.BN[c])
}

// optional returns m as the optional interface T (Communicator, Finetuner, RoundEnder,
// MultiModel, GlobalEvaluator): m itself, or the method a bnKeep wraps. Every optional interface is
// looked up through here, so wrapping a method never hides one.
func optional[T any](m Method) (T, bool) {
	if t, ok := m.(T); ok {
		return t, true
	}
	if w, ok := m.(bnKeep); ok {
		t, ok := w.Method.(T)
		return t, ok
	}
	var zero T
	return zero, false
}
