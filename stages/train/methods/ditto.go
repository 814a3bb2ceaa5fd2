package methods

import (
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// DittoParams are ditto's parameters.
type DittoParams struct {
	Lambda float32 `param:"lambda" default:"0.1" check:"ge0" doc:"proximal weight of the personal objective"`
}

func init() {
	train.Register(manifest.MethodDef{Name: "ditto", Display: "Ditto", Cost: manifest.CostIs(2, "the global model's local epochs and the personal model's as many again (two trainings)"), Extension: manifest.ExtensionIs(manifest.ExtendAlways), Personal: true,
		Doc: "Ditto (Li et al. 2021): FedAvg for the global model, plus a personal model per client trained with lambda/2 |v - theta_g|^2; clients are evaluated with their personal models."},
		func(p *DittoParams) train.Method { return ditto{lambda: p.Lambda} })
}

// ditto (Li et al. 2021): the global model trains as in FedAvg; each sampled client also
// trains its personal model, from where it left it, for the run's local epochs with the
// proximal term λ/2·‖v − θ_g‖² toward the round's global model. Clients are evaluated with
// their personal models. With λ = 0 the personal models are exactly train.Local's (same
// initialization, same sample streams).
type ditto struct{ lambda float32 }

func (d ditto) Init(st *train.State, clients int) {
	st.Personal = make([]tensor.List, clients)
	for c := range st.Personal {
		st.Personal[c] = st.Global
	}
}

func (d ditto) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
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

// ConcurrentClients implements train.ConcurrentClients: Train reads the global model and
// client c's personal model as Finish left them and writes nothing but its Upload.
func (ditto) ConcurrentClients() bool { return true }

func (d ditto) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	for c, u := range uploads {
		st.Personal[c] = u.Personal
	}
	return fedAvg{}.Finish(st, uploads, sizes)
}

func (d ditto) EvalModel(st *train.State, c int) tensor.List { return st.Personal[c] }
