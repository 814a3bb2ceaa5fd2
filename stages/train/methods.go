package train

import (
	"sort"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// fedAvg: clients train from the global model; the server replaces it with the average
// of the trained models weighted by training-set size (or uniformly, with
// uniform_weights); everyone is evaluated with it. With mu > 0 it is FedProx (Li et al.):
// local training adds μ/2·‖θ − θ_g‖² toward the round's global model.
type fedAvg struct {
	uniform bool
	mu      float32
}

func (fedAvg) Init(*State, int) {}

func (f fedAvg) Train(l *Local, st *State, _ int) (Upload, error) {
	p, err := l.TrainProx(st.Global, nil, l.LR(), l.Epochs(), "shuffle", f.mu, st.Global)
	return Upload{Params: p}, err
}

func (f fedAvg) Finish(st *State, uploads map[int]Upload, sizes map[int]int) error {
	_, models, weights := bySize(uploads, sizes)
	if f.uniform {
		for i := range weights {
			weights[i] = 1
		}
	}
	g, err := WeightedAverage(models, weights)
	if err != nil {
		return err
	}
	st.Global = g
	return nil
}

func (fedAvg) EvalModel(st *State, _ int) tensor.List { return st.Global }

// bySize lists the round's uploading clients in order, with their uploaded models and their
// training-set sizes as weights: the inputs of a size-weighted average.
func bySize(uploads map[int]Upload, sizes map[int]int) (ids []int, models []tensor.List, weights []float64) {
	ids = sortedClients(uploads)
	models = make([]tensor.List, len(ids))
	weights = make([]float64, len(ids))
	for i, c := range ids {
		models[i], weights[i] = uploads[c].Params, float64(sizes[c])
	}
	return ids, models, weights
}

func sortedClients(uploads map[int]Upload) []int {
	ids := make([]int, 0, len(uploads))
	for c := range uploads {
		ids = append(ids, c)
	}
	sort.Ints(ids)
	return ids
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
