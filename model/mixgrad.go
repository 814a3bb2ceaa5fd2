package model

import (
	"errors"
	"fmt"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck // GoMLX's idiomatic dot-import.
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// mixedGradGraph builds the gradient of the mean cross-entropy of mixed logits
// scale·f(θ; x) + offset, offset held fixed (FL-bench's APFL trains its personal model on
// α·v(x) + (1−α)·w(x).detach(), src/client/apfl.py:59-63 of the FedOBP fork): inputs =
// params (n), x, labels, offset [B, classes], scale [1]; outputs = the n gradients (zeros
// for running statistics), then the running statistics' new values (BatchStats). Training
// mode, as Gradient.
func mixedGradGraph(net network, inputs []*Node) []*Node {
	n := net.numParams()
	params, x, labels, offset := inputs[:n], inputs[n], inputs[n+1], inputs[n+2]
	grads, state := mixedPass(net, params, x, labels, offset, Reshape(inputs[n+3]))
	return append(zeroMissing(grads, params), presentState(state)...)
}

// mixedPass is mixedGradGraph's training pass with the scale a scalar: the gradient of
// every trained parameter (nil for running statistics) and the new value of every running
// statistic (nil for trained parameters).
func mixedPass(net network, params []*Node, x, labels, offset, scale *Node) (grads, state []*Node) {
	mix := func(logits *Node) *Node {
		_, dMixed, _ := crossEntropy(Add(Mul(logits, scale), offset), labels)
		return Mul(dMixed, scale)
	}
	switch t := net.(type) {
	case seqNet:
		logits, caches := forward(t, params, x)
		return backward(t, params, caches, mix(logits)), make([]*Node, len(params))
	case tapeNetwork:
		f, fv := t.net.run(params, x, t.inputShape, true)
		logits := f.head(fv)
		logits.g = mix(logits.n)
		f.t.backward()
		grads = make([]*Node, len(params))
		for i, p := range f.params {
			if !t.net.defs[i].runningStats {
				grads[i] = p.g
			}
		}
		return grads, f.state
	default:
		panic(fmt.Sprintf("gomlx: no mixed gradient for %T", net))
	}
}

// MixedGradient returns the gradient with respect to params of the mean cross-entropy of
// the logits scale·f(params; x) + offset on the batch (x, y), where offset holds one row
// of NumClasses values per sample, row-major, and is a constant. With scale 1 and a zero
// offset it is Gradient's. Like Gradient, it keeps the running statistics the batch's
// training-mode forward pass computes for BatchStats.
func (m *Model) MixedGradient(params tensor.List, x []float32, y []int32, scale float32, offset []float32) (tensor.List, error) {
	if m.train == nil {
		return nil, errors.New("model is closed")
	}
	if len(offset) != len(y)*m.spec.NumClasses {
		return nil, fmt.Errorf("mixed gradient: %d offsets for %d samples of %d classes", len(offset), len(y), m.spec.NumClasses)
	}
	e, err := m.auxExec("mixgrad", mixedGradGraph)
	if err != nil {
		return nil, err
	}
	rows := m.gradRows(len(y)) // padding rows: a zero offset, their labels mask them out
	ot := tensors.FromFlatDataAndDimensions(zeroRows(offset, rows, m.spec.NumClasses), rows, m.spec.NumClasses)
	st := tensors.FromFlatDataAndDimensions([]float32{scale}, 1)
	defer finalize(ot, st)
	outs, err := m.execBatch(e, params, x, y, true, ot, st)
	if err != nil {
		return nil, fmt.Errorf("mixed gradient: %w", err)
	}
	defer finalize(outs...)
	return m.gradientOutputs(outs)
}

// trainLogitsGraph builds the training-mode forward pass: inputs = params (n), x; outputs
// = the logits [B, classes], then the running statistics' new values (BatchStats).
func trainLogitsGraph(net network, inputs []*Node) []*Node {
	n := net.numParams()
	logits, state := trainLogitsPass(net, inputs[:n], inputs[n])
	return append([]*Node{logits}, presentState(state)...)
}

// trainLogitsPass is trainLogitsGraph's forward pass: the logits and the new value of
// every running statistic (nil for trained parameters; all nil without BatchNorm).
func trainLogitsPass(net network, params []*Node, x *Node) (logits *Node, state []*Node) {
	switch t := net.(type) {
	case seqNet:
		logits, _ := forward(t, params, x)
		return logits, make([]*Node, len(params))
	case tapeNetwork:
		f, fv := t.net.run(params, x, t.inputShape, true)
		return f.head(fv).n, f.state
	default:
		panic(fmt.Sprintf("gomlx: no training-mode logits for %T", net))
	}
}

// TrainLogits returns the logits of the batch y labels (row-major [len(y), NumClasses])
// under params in training mode: BatchNorm normalizes with the batch's statistics, whose
// momentum update it keeps for BatchStats, as a PyTorch model in train() mode does on a
// forward pass (FL-bench's APFL mixes such logits of its global model, src/client/apfl.py:
// 60 of the FedOBP fork). The labels are only checked. Without BatchNorm it is the
// forward pass Logits computes.
func (m *Model) TrainLogits(params tensor.List, x []float32, y []int32) ([]float32, error) {
	if m.train == nil {
		return nil, errors.New("model is closed")
	}
	e, err := m.auxExec("trainlogits", trainLogitsGraph)
	if err != nil {
		return nil, err
	}
	outs, err := m.execBatch(e, params, x, y, false)
	if err != nil {
		return nil, fmt.Errorf("training-mode forward pass: %w", err)
	}
	defer finalize(outs...)
	logits, err := tensors.CopyFlatData[float32](outs[0])
	if err != nil {
		return nil, err
	}
	if err := m.keepBatchStats(outs[1:]); err != nil {
		return nil, err
	}
	return logits[:len(y)*m.spec.NumClasses], nil // without the padding rows' (gradRows)
}

// auxExec returns the auxiliary graph called name, built by build on first use.
func (m *Model) auxExec(name string, build func(network, []*Node) []*Node) (*Exec, error) {
	if m.aux == nil {
		m.aux = map[string]*Exec{}
	}
	e := m.aux[name]
	if err := m.lazyExec(&e, name, build); err != nil {
		return nil, err
	}
	m.aux[name] = e
	return e, nil
}

// gradRows is the batch size at which Gradient, MixedGradient, TrainLogits and
// FeatureGradient run a batch of n samples: n, or, on a model that pads (PadsBatches),
// the largest batch it has run or trained so far, the rest masked padding rows (label −1,
// exact as Session.Step's). A federated run's clients end their epochs on batches of every
// size below the batch size; without padding each size would compile, and keep, a graph
// of its own for each of these functions (hundreds of MB over a 100-client run).
func (m *Model) gradRows(n int) int {
	if !m.padTrain {
		return n
	}
	m.trainBatch = max(m.trainBatch, n)
	return m.trainBatch
}

// zeroRows returns v, rows of width values each, extended with zero rows to rows rows
// (a copy when it grows; the caller's slice is never written).
func zeroRows(v []float32, rows, width int) []float32 {
	if n := rows * width; n > len(v) {
		return append(v[:len(v):len(v)], make([]float32, n-len(v))...)
	}
	return v
}

// execBatch runs e on params, the batch x (and its labels y when labels is set: y is
// checked either way), padded to gradRows, and the extra inputs (whose rows, if they
// have any, the caller pads alike), and returns its outputs for the caller to finalize.
func (m *Model) execBatch(e *Exec, params tensor.List, x []float32, y []int32, labels bool, extra ...*tensors.Tensor) ([]*tensors.Tensor, error) {
	ps, err := m.toTensors(params)
	if err != nil {
		return nil, err
	}
	defer finalize(ps...)
	xt, yt, err := m.batchTensors(x, y, m.gradRows(len(y)))
	if err != nil {
		return nil, err
	}
	defer finalize(xt, yt)
	args := make([]any, 0, len(ps)+2+len(extra))
	for _, p := range ps {
		args = append(args, p)
	}
	args = append(args, xt)
	if labels {
		args = append(args, yt)
	}
	for _, t := range extra {
		args = append(args, t)
	}
	return e.Exec(args...)
}

// gradientOutputs copies a gradient graph's outputs: one gradient per parameter, in
// canonical order, then the new running statistics, which it keeps for BatchStats.
func (m *Model) gradientOutputs(outs []*tensors.Tensor) (tensor.List, error) {
	n := len(m.names)
	grads := make(tensor.List, n)
	for i, t := range outs[:n] {
		data, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return nil, err
		}
		grads[i] = tensor.Tensor{Name: m.names[i], Shape: append([]int(nil), m.shapes[i]...), Data: data}
	}
	if err := m.keepBatchStats(outs[n:]); err != nil {
		return nil, err
	}
	return grads, nil
}
