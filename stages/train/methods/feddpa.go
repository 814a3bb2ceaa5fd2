package methods

import (
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FedDPAParams are feddpa's parameters.
type FedDPAParams struct {
	Q float64 `param:"q" default:"0.4" check:"unit" doc:"per-tensor quantile of the Fisher scores (0.4 in FedOBP's runs)"`
}

func init() {
	train.Register(manifest.MethodDef{Name: "feddpa", Personal: true,
		Doc: "FedDPA, FedOBP's Fisher-based baseline: entries whose empirical Fisher information exceeds their tensor's q-quantile keep the client's value."},
		newFedDPA)
}
