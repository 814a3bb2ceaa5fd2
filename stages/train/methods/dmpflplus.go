package methods

import (
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// DMPFLPlusParams are dmpfl_plus's parameters: DM-PFL's, then base_entropy.
type DMPFLPlusParams struct {
	DMPFLParams
	BaseEntropy string `param:"base_entropy" choices:"train|test" doc:"data the base entropies BE are measured on: the client's own training data (default; never the data being evaluated) or its unshifted test data"`
}

func init() {
	train.Register(manifest.MethodDef{Name: "dmpfl_plus", Display: "DM-PFL+", Cost: manifest.CostIs(1, "DM-PFL's training; its adaptive inference costs at evaluation only"), Extension: manifest.ExtensionIs(manifest.ExtendNever), Personal: true, NeedsGlobal: true,
		Doc: "DM-PFL+ (Alg. 4): DM-PFL trained the same way, evaluated per sample with the personal or the global model, whichever has the lower output entropy after discounting (1 - cosine similarity of the two outputs) times its base entropy on the client's unshifted data."},
		func(p *DMPFLPlusParams) train.Method {
			d := newDMPFL(&p.DMPFLParams)
			d.plus, d.baseOnTest = true, p.BaseEntropy == "test"
			return d
		})
}
