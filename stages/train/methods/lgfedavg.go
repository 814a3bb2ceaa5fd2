package methods

import (
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// LGFedAvgParams are lgfedavg's parameters.
type LGFedAvgParams struct {
	Impl            string `param:"impl" choices:"paper|flbench" doc:"paper: LG-FedAvg's paper (personal body, global head classifier.*); flbench: FL-bench as FedOBP's tables ran it (src/client/lgfedavg.py:10-21): the first num_global_layers conv/BatchNorm/linear layers global, every later one (the classifier included) personal, all parameters averaged and a client's first round started from the average"`
	NumGlobalLayers int    `param:"num_global_layers" default:"1" check:"gt0" doc:"flbench only: how many layers, in model order, are global (FL-bench's default 1, src/server/lgfedavg.py:13)"`
}

// LG-FedAvg is split with a personal body and a global head, trained jointly; under
// flbench the split is by layer count instead, the other way round.
func init() {
	// BNRevision 1: impl flbench keeps a personal BatchNorm layer's running statistics
	// personal (layerMask).
	train.Register(manifest.MethodDef{Name: "lgfedavg", Display: "LG-FedAvg", Cost: manifest.PlainTraining, Extension: manifest.ExtensionIs(manifest.ExtendAlways), Personal: true, BNRevision: 1,
		Doc: "LG-FedAvg (Liang et al.): personal body, global head (classifier.*), trained jointly; impl flbench: FL-bench's split, the first num_global_layers layers global and the rest personal."},
		func(p *LGFedAvgParams) train.Method {
			if p.Impl == "flbench" {
				return &split{schedule: "joint", flbench: true, globalLayers: p.NumGlobalLayers}
			}
			return &split{personal: []string{"classifier."}, invert: true, schedule: "joint"}
		})
}
