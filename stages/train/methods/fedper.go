package methods

import (
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FedPerParams are fedper's parameters.
type FedPerParams struct {
	Impl string `param:"impl" choices:"paper|flbench" doc:"paper: FedPer's paper (the server averages the body; a client's head starts from the initial model); flbench: FL-bench as FedOBP's tables ran it (src/client/fedper.py:7-9 only names the classifier personal; FedAvgClient uploads everything): every parameter uploaded and averaged, head included, a client overriding the head with its own once it has one, so its first round starts from the average"`
}

// FedPer is split with a personal head trained jointly with the shared body.
func init() {
	train.Register(manifest.MethodDef{Name: "fedper", Display: "FedPer", Cost: manifest.PlainTraining, Extension: manifest.ExtensionIs(manifest.ExtendAlways), Personal: true,
		Doc: "FedPer (Arivazhagan et al.): personal head (classifier.*), shared body, trained jointly; the server averages the body by training-set size; impl flbench: FL-bench's averaging of every parameter."},
		func(p *FedPerParams) train.Method {
			return &split{personal: []string{"classifier."}, schedule: "joint", flbench: p.Impl == "flbench"}
		})
}
