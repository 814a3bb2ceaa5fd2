package methods

import (
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

func init() {
	train.Register(manifest.MethodDef{Name: "local", Display: "Local", Cost: manifest.PlainTraining, Extension: manifest.ExtensionIs(manifest.ExtendAlways), Personal: true,
		Doc: "Local training: each client trains only on its own data and never communicates."},
		func(*train.NoParams) train.Method { return local{} })
}

// local: every client starts from the same initial model and trains only on its own data;
// nothing is exchanged.
type local struct{}

func (local) Init(st *train.State, clients int) {
	st.Personal = make([]tensor.List, clients)
	for c := range st.Personal {
		st.Personal[c] = st.Global
	}
}

func (local) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	p, err := l.Fit(st.Personal[c], train.Fit{})
	return train.Upload{Params: p}, err
}

func (local) Finish(st *train.State, uploads map[int]train.Upload, _ map[int]int) error {
	for c, u := range uploads {
		st.Personal[c] = u.Params
	}
	return nil
}

func (local) EvalModel(st *train.State, c int) tensor.List { return st.Personal[c] }

// Comm: train.Local exchanges nothing.
func (local) Comm(*train.State, int, train.Upload) (int64, int64) { return 0, 0 }

// ConcurrentClients implements train.ConcurrentClients: Train reads the state as Finish left
// it and writes only client c's slots, so a round's clients may train at the same time.
func (local) ConcurrentClients() bool { return true }
