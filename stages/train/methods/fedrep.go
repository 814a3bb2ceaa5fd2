package methods

import (
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FedRepParams are fedrep's parameters.
type FedRepParams struct {
	Impl           string `param:"impl" choices:"paper|flbench" doc:"paper: FedRep's paper (head_epochs of head, then train.local_epochs of body); flbench: FL-bench as FedOBP's tables ran it (src/client/fedrep.py:62-124): of train.local_epochs, the last train_body_epochs train the body and the ones before the head; all parameters averaged, a client's first round started from the average; evaluation fine-tunes the head alone for head_epochs"`
	HeadEpochs     int    `param:"head_epochs" default:"10" check:"ge0" doc:"paper: epochs of head-only training per round (FedRep's paper: 10); flbench: epochs of head-only fine-tuning before evaluation, replacing train.finetune_epochs (FL-bench's test.client.finetune_epoch, 5 in FedOBP's runs)"`
	TrainBodyEpoch int    `param:"train_body_epochs" default:"1" check:"ge0" doc:"flbench only: the last this many local epochs train the body (FL-bench's train_body_epoch, default 1, src/server/fedrep.py:13)"`
}

// FedRep is split with the head trained alone first, then the body alone.
func init() {
	train.Register(manifest.MethodDef{Name: "fedrep", Display: "FedRep", Cost: repCost, Extension: manifest.ExtensionIs(manifest.ExtendAlways), Personal: true,
		Doc: "FedRep (Collins et al.): personal head trained alone first (head_epochs), then the shared body alone (train.local_epochs); impl flbench: FL-bench's schedule within train.local_epochs and head-only fine-tuning."},
		func(p *FedRepParams) train.Method {
			return &split{personal: []string{"classifier."}, schedule: "rep", headEpochs: p.HeadEpochs,
				flbench: p.Impl == "flbench", bodyEpochs: p.TrainBodyEpoch}
		})
}

// repCost is FedRep's implied cost. A head-only epoch is a forward pass through the whole
// network and a backward pass that stops at the head (Session.SetMask's frozen-layers
// step): a third of a training epoch, the head's own small backward left out. The paper's
// round is head_epochs of those, then train.local_epochs (E) of the body: 1 + head/(3E).
// FL-bench's E local epochs are E − b head-only ones and b of the body
// (train_body_epochs): (b + (E − b)/3)/E, below FedAvg's round; its head-only fine-tuning
// belongs to evaluation.
func repCost(c manifest.CostOf) manifest.ImpliedCost {
	e := float64(c.Epochs)
	if c.Options["impl"] == "flbench" {
		b := min(max(c.Params["train_body_epochs"], 0), e)
		return manifest.ImpliedCost{Multiple: (b + (e-b)/3) / e,
			Why: "of the local epochs, the last train_body_epochs train the body (a whole pass each), the others the head alone (a forward pass, a third)"}
	}
	h := max(c.Params["head_epochs"], 0)
	return manifest.ImpliedCost{Multiple: 1 + h/(3*e),
		Why: "head_epochs of the head alone (a forward pass each, a third of an epoch), then the local epochs of the body"}
}
