package train

import "github.com/fedpipe/fedpipe/manifest"

// LG-FedAvg is split with a personal body and a global head, trained jointly.
func init() {
	Register(manifest.MethodDef{Name: "lgfedavg", Personal: true,
		Doc: "LG-FedAvg (Liang et al.): personal body, global head (classifier.*), trained jointly."},
		func(*NoParams) Method {
			return &split{personal: []string{"classifier."}, invert: true, schedule: "joint"}
		})
}
