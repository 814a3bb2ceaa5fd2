package methods

import (
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// LG-FedAvg is split with a personal body and a global head, trained jointly.
func init() {
	train.Register(manifest.MethodDef{Name: "lgfedavg", Personal: true,
		Doc: "LG-FedAvg (Liang et al.): personal body, global head (classifier.*), trained jointly."},
		func(*train.NoParams) train.Method {
			return &split{personal: []string{"classifier."}, invert: true, schedule: "joint"}
		})
}
