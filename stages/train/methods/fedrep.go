package methods

import (
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FedRepParams are fedrep's parameters.
type FedRepParams struct {
	HeadEpochs int `param:"head_epochs" default:"10" check:"ge0" doc:"epochs of head-only training per round (FedRep's paper: 10)"`
}

// FedRep is split with the head trained alone first, then the body alone.
func init() {
	train.Register(manifest.MethodDef{Name: "fedrep", Personal: true,
		Doc: "FedRep (Collins et al.): personal head trained alone first (head_epochs), then the shared body alone (train.local_epochs)."},
		func(p *FedRepParams) train.Method {
			return &split{personal: []string{"classifier."}, schedule: "rep", headEpochs: p.HeadEpochs}
		})
}
