package methods

import (
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/train"
)

// initialOf returns the initial model FedOBP kept in its state (fedOBPState.Init: the θ_c
// of a client that never trained), or nil.
func initialOf(st *train.State) tensor.List {
	if s, ok := st.Method.(*fedOBPState); ok {
		return s.Init
	}
	return nil
}

// fisher returns the client's Fisher scores at params: the square of the gradient of its
// mean training loss (FedOBP Eq. 6; Local.FullGradientSquared) or, for the empirical
// form, the mean of its squared per-sample gradients (Local.Fisher; FedDPA's with
// Local.BatchedFisher).
func (f *fedOBP) fisher(l *train.Local, params tensor.List) (tensor.List, error) {
	if f.batchedFisher {
		return l.BatchedFisher(params)
	}
	if !f.fisherFull {
		return l.Fisher(params)
	}
	return l.FullGradientSquared(params)
}
