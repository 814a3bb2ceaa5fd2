package train

import (
	"sort"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// fedAvg: clients train from the global model; the server replaces it with the average
// of the trained models weighted by training-set size; everyone is evaluated with it.
type fedAvg struct{}

func (fedAvg) Init(*State, int) {}

func (fedAvg) Start(st *State, _ int) tensor.List { return st.Global }

func (fedAvg) Finish(st *State, trained map[int]tensor.List, sizes map[int]int) error {
	ids := make([]int, 0, len(trained))
	for c := range trained {
		ids = append(ids, c)
	}
	sort.Ints(ids)
	models := make([]tensor.List, len(ids))
	weights := make([]float64, len(ids))
	for i, c := range ids {
		models[i], weights[i] = trained[c], float64(sizes[c])
	}
	g, err := WeightedAverage(models, weights)
	if err != nil {
		return err
	}
	st.Global = g
	return nil
}

func (fedAvg) EvalModel(st *State, _ int) tensor.List { return st.Global }

// local: every client starts from the same initial model and trains only on its own data;
// nothing is exchanged.
type local struct{}

func (local) Init(st *State, clients int) {
	st.Personal = make([]tensor.List, clients)
	for c := range st.Personal {
		st.Personal[c] = st.Global
	}
}

func (local) Start(st *State, c int) tensor.List { return st.Personal[c] }

func (local) Finish(st *State, trained map[int]tensor.List, _ map[int]int) error {
	for c, p := range trained {
		st.Personal[c] = p
	}
	return nil
}

func (local) EvalModel(st *State, c int) tensor.List { return st.Personal[c] }
