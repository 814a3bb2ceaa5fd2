package train

import "github.com/fedpipe/fedpipe/manifest"

// FedPer is split with a personal head trained jointly with the shared body.
func init() {
	Register(manifest.MethodDef{Name: "fedper", Personal: true,
		Doc: "FedPer (Arivazhagan et al.): personal head (classifier.*), shared body, trained jointly; the server averages the body by training-set size."},
		func(*NoParams) Method { return &split{personal: []string{"classifier."}, schedule: "joint"} })
}
