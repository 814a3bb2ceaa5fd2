package train

import (
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
)

func init() {
	Register(manifest.MethodDef{Name: "local", Personal: true,
		Doc: "Local training: each client trains only on its own data and never communicates."},
		func(*NoParams) Method { return local{} })
}

// local: every client starts from the same initial model and trains only on its own data;
// nothing is exchanged.
type local struct{}

func (local) Init(st *State, clients int) {
	st.Personal = make([]tensor.List, clients)
	for c := range st.Personal {
		st.Personal[c] = st.Global
	}
}

func (local) Train(l *Local, st *State, c int) (Upload, error) {
	p, err := l.Train(st.Personal[c], nil, l.LR(), l.Epochs(), "shuffle")
	return Upload{Params: p}, err
}

func (local) Finish(st *State, uploads map[int]Upload, _ map[int]int) error {
	for c, u := range uploads {
		st.Personal[c] = u.Params
	}
	return nil
}

func (local) EvalModel(st *State, c int) tensor.List { return st.Personal[c] }

// Comm: Local exchanges nothing.
func (local) Comm(*State, int, Upload) (int64, int64) { return 0, 0 }
