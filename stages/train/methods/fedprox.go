package methods

import (
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FedProxParams are fedprox's parameters.
type FedProxParams struct {
	Mu float32 `param:"mu" default:"0.01" check:"ge0" doc:"proximal weight (0.01 in FL-bench; DM-PFL uses 0.05)"`
}

// FedProx (Li et al.) is fedAvg with mu > 0.
func init() {
	train.Register(manifest.MethodDef{Name: "fedprox", Display: "FedProx", Cost: manifest.CostIs(1, "local training as FedAvg's; the proximal term is one per-parameter pass a step"), Extension: manifest.ExtensionIs(manifest.ExtendAlways),
		Doc: "FedProx (Li et al.): FedAvg whose local loss adds mu/2 |theta - theta_g|^2 toward the round's global model."},
		func(p *FedProxParams) train.Method { return fedAvg{mu: p.Mu} })
}
