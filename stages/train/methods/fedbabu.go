package methods

import (
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FedBABUParams are fedbabu's parameters.
type FedBABUParams struct {
	HeadEpochs int `param:"head_epochs" default:"5" check:"ge0" doc:"epochs of head-only fine-tuning before evaluation (our default; replaces train.finetune_epochs)"`
}

// FedBABU is split with a frozen head during training, fine-tuned alone before evaluation.
func init() {
	train.Register(manifest.MethodDef{Name: "fedbabu", Display: "FedBABU", Cost: manifest.PlainTraining, Extension: manifest.ExtensionIs(manifest.ExtendAlways), Personal: true,
		Doc: "FedBABU (Oh et al.): the head keeps its random initialization during federated training (only the body trains and is averaged); each client fine-tunes the head alone before evaluation."},
		func(p *FedBABUParams) train.Method {
			return &split{personal: []string{"classifier."}, schedule: "babu", headEpochs: p.HeadEpochs}
		})
}
