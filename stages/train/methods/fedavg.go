package methods

import (
	"sort"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FedAvgParams are fedavg's parameters.
type FedAvgParams struct {
	UniformWeights bool `param:"uniform_weights" default:"0" check:"unit" doc:"1: average clients with equal weights instead of by training-set size"`
}

func init() {
	train.Register(manifest.MethodDef{Name: "fedavg", Display: "FedAvg", Cost: manifest.CostIs(1, "the reference: local epochs of one forward and one backward pass a sample, then a size-weighted average"), CostReference: true, Extension: manifest.ExtensionIs(manifest.ExtendAlways),
		Doc: "FedAvg (McMahan et al.): the server averages the sampled clients' models weighted by training-set size; every client is evaluated with the global model."},
		func(p *FedAvgParams) train.Method { return fedAvg{uniform: p.UniformWeights} })
}

// fedAvg: clients train from the global model; the server replaces it with the average
// of the trained models weighted by training-set size (or uniformly, with
// uniform_weights); everyone is evaluated with it. With mu > 0 it is FedProx (Li et al.):
// local training adds μ/2·‖θ − θ_g‖² toward the round's global model.
type fedAvg struct {
	uniform bool
	mu      float32
}

func (fedAvg) Init(*train.State, int) {}

func (f fedAvg) Train(l *train.Local, st *train.State, _ int) (train.Upload, error) {
	p, err := l.Fit(st.Global, train.Fit{Mu: f.mu, Ref: st.Global})
	return train.Upload{Params: p}, err
}

func (f fedAvg) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	_, models, weights := bySize(uploads, sizes)
	if f.uniform {
		for i := range weights {
			weights[i] = 1
		}
	}
	g, err := train.WeightedAverage(models, weights)
	if err != nil {
		return err
	}
	st.Global = g
	return nil
}

func (fedAvg) EvalModel(st *train.State, _ int) tensor.List { return st.Global }

// bySize lists the round's uploading clients in order, with their uploaded models and their
// training-set sizes as weights: the inputs of a size-weighted average.
func bySize(uploads map[int]train.Upload, sizes map[int]int) (ids []int, models []tensor.List, weights []float64) {
	ids = sortedClients(uploads)
	models = make([]tensor.List, len(ids))
	weights = make([]float64, len(ids))
	for i, c := range ids {
		models[i], weights[i] = uploads[c].Params, float64(sizes[c])
	}
	return ids, models, weights
}

func sortedClients(uploads map[int]train.Upload) []int {
	ids := make([]int, 0, len(uploads))
	for c := range uploads {
		ids = append(ids, c)
	}
	sort.Ints(ids)
	return ids
}

// ConcurrentClients implements train.ConcurrentClients: Train reads the state as Finish left
// it and writes only client c's slots, so a round's clients may train at the same time.
func (fedAvg) ConcurrentClients() bool { return true }
