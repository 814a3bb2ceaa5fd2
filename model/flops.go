package model

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck // GoMLX's idiomatic dot-import.
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/fedpipe/fedpipe/gomlx"
)

// MACs returns, per weight tensor (by name), the multiply-accumulate operations one
// sample's forward pass spends on it: a convolution oh·ow·k·k·cin·cout (its output
// positions times the kernel volume, strides and padding included), a dense layer in·out.
// Biases, BatchNorm, activations and pooling are not counted.
func (s ModelSpec) MACs() (map[string]int64, error) {
	net, err := s.network()
	if err != nil {
		return nil, err
	}
	if tn, ok := net.(tapeNetwork); ok {
		return tn.macs()
	}
	ls := net.(seqNet)
	out := make(map[string]int64, len(ls))
	for _, l := range ls {
		switch l.kind {
		case layerConv:
			oh, ow := l.convOut()
			out[l.name+".weight"] = int64(oh) * int64(ow) * int64(l.k*l.k*l.cin) * int64(l.cout)
		case layerFC:
			out[l.name+".weight"] = int64(l.in) * int64(l.out)
		}
	}
	return out, nil
}

// macs builds (never runs) the network's evaluation graph for one sample and reads the
// multiply-accumulates its conv and dense ops record on the tape, so every stride, padding
// and shortcut of the forward code is counted as it is computed.
func (t tapeNetwork) macs() (map[string]int64, error) {
	b, err := gomlx.Get(CPUBackend)
	if err != nil {
		return nil, err
	}
	g := NewGraph(b, "fedpipe-macs")
	defer g.Finalize()
	f := &fwd{t: &tape{macs: map[*tv]int64{}}, net: t.net, params: make([]*tv, len(t.net.defs)), state: make([]*Node, len(t.net.defs))}
	for i, d := range t.net.defs {
		f.params[i] = &tv{n: Parameter(g, d.name, shapes.Make(dtypes.Float32, d.shape...))}
	}
	x := Parameter(g, "x", shapes.Make(dtypes.Float32, append([]int{1}, t.inputShape...)...))
	f.head(f.net.body(f, &tv{n: x}))
	out := map[string]int64{}
	for i, d := range t.net.defs {
		if m, ok := f.t.macs[f.params[i]]; ok {
			out[d.name] = m
		}
	}
	return out, nil
}

// TrainFLOPs returns the floating-point operations of one training sample's products, 2 per
// multiply-accumulate: the forward pass, every weight gradient, and the input gradient of
// every layer but the one that reads the batch (which neither network computes: nothing
// needs the gradient of the images). Biases, BatchNorm, activations, pooling, the loss and
// the optimizer are not counted: this is the work the GEMMs do, the rate a training run is
// held against the FMA units with (see gemm.FMAPeak).
func (s ModelSpec) TrainFLOPs() (int64, error) {
	macs, err := s.MACs()
	if err != nil {
		return 0, err
	}
	names, _, err := s.ParamShapes()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, m := range macs {
		total += m
	}
	return 2 * (3*total - macs[names[0]]), nil
}
