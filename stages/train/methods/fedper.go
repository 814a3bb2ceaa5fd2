package methods

import (
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FedPer is split with a personal head trained jointly with the shared body.
func init() {
	train.Register(manifest.MethodDef{Name: "fedper", Personal: true,
		Doc: "FedPer (Arivazhagan et al.): personal head (classifier.*), shared body, trained jointly; the server averages the body by training-set size."},
		func(*train.NoParams) train.Method {
			return &split{personal: []string{"classifier."}, schedule: "joint"}
		})
}
