// Package example holds the method that docs/adding-a-method.md walks through, MyDitto, a
// copy of Ditto written the way a new method is written. Nothing imports this package, so
// fedpipe itself never registers it; its test compiles it, checks the guide shows this
// file as it is, and runs it beside the registered Ditto and FedAvg.
package example

import (
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// MyDittoParams are myditto's parameters: one field per parameter, described by its tags.
type MyDittoParams struct {
	Lambda float32 `param:"lambda" default:"0.1" check:"ge0" doc:"proximal weight of the personal objective"`
}

func init() {
	train.Register(manifest.MethodDef{
		Name: "myditto",
		Doc:  "Ditto (Li et al. 2021), as docs/adding-a-method.md writes it.",
		// Each client ends with its own model, evaluated on its own test split.
		Personal: true,
		// Raising train.rounds continues a cached shorter run: the first R rounds of a
		// longer run are those of an R-round run, and evaluating changes no state.
		Extension: manifest.ExtensionIs(manifest.ExtendAlways),
	}, func(p *MyDittoParams) train.Method { return myDitto{lambda: p.Lambda} })
}

// myDitto: every sampled client trains the global model as in FedAvg and, from where it
// left it, its personal model with λ/2·‖v − θ_g‖² toward the round's global model; the
// server averages the global models by training-set size; clients are evaluated with
// their personal models.
type myDitto struct{ lambda float32 }

// Init starts every client's personal model at the initial global model.
func (d myDitto) Init(st *train.State, clients int) {
	st.Personal = make([]tensor.List, clients)
	for c := range st.Personal {
		st.Personal[c] = st.Global
	}
}

// Train is client c's part of a round. It reads the state as the last Finish left it and
// writes nothing: what it trained goes back in the Upload.
func (d myDitto) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	// The run's local training (epochs, learning rate, "shuffle" sample order) of the
	// global model, on a stream of its own so that it and the personal model see
	// independent sample orders.
	g, err := l.Fit(st.Global, train.Fit{Stream: "ditto-global"})
	if err != nil {
		return train.Upload{}, err
	}
	v, err := l.Fit(st.Personal[c], train.Fit{Mu: d.lambda, Ref: st.Global})
	if err != nil {
		return train.Upload{}, err
	}
	return train.Upload{Params: g, Personal: v}, nil
}

// Finish folds the round's uploads into the state, in client order so the sum is the same
// whatever order the clients finished in.
func (d myDitto) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	var models []tensor.List
	var weights []float64
	for c := range st.Personal {
		u, ok := uploads[c]
		if !ok {
			continue
		}
		st.Personal[c] = u.Personal
		models, weights = append(models, u.Params), append(weights, float64(sizes[c]))
	}
	g, err := train.WeightedAverage(models, weights)
	if err != nil {
		return err
	}
	st.Global = g
	return nil
}

// EvalModel is the model client c is evaluated with.
func (d myDitto) EvalModel(st *train.State, c int) tensor.List { return st.Personal[c] }

// ConcurrentClients: Train reads the state only as Finish left it and writes nothing, so
// a round's clients may train at the same time, with the bits of training them in turn.
func (d myDitto) ConcurrentClients() bool { return true }
