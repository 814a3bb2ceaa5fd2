package model

import (
	"errors"
	"fmt"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck // GoMLX's idiomatic dot-import.
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model/arch"
)

// This file gives methods that work on penultimate features (FedPAC, pFedFDA, FLUTE,
// FedALA) what they need: the features of a batch, and the gradient of the cross-entropy
// plus a feature alignment penalty. The "features" of a sample are the input of the
// classifier layer: the output of the last hidden layer after its ReLU (cnn4 and fedavgcnn:
// fc1, 512 values; mlp: the last hidden width), the globally average-pooled last stage for
// the ResNet-18s (8·Width values, 512 for the real network), or the flattened input for
// logreg, which has no body. The graphs are built from the featureNetwork interface.

// FeatureDim is the number of penultimate features of the model: the classifier's input;
// 0 for models without feature access (see HasFeatures).
func (m *Model) FeatureDim() int {
	fn, ok := m.net.(featureNetwork)
	if !ok {
		return 0
	}
	return fn.featureDim()
}

// FeatureArchs lists the architectures whose penultimate features this file can compute:
// all of them (arch.Features, which package manifest checks methods against). FedPAC,
// pFedFDA, FLUTE and FedALA need them.
var FeatureArchs = arch.Features

// HasFeatures reports whether the model's penultimate features are available.
func (m *Model) HasFeatures() bool {
	_, ok := m.net.(featureNetwork)
	return ok
}

// featuresGraph: inputs = params (n), x; output = the features [B, d] in evaluation mode.
func featuresGraph(net featureNetwork, inputs []*Node) []*Node {
	n := net.numParams()
	return []*Node{net.evalFeatures(inputs[:n], inputs[n])}
}

// featureGradGraph: inputs = params (n), x, labels, targets [B, d], weights [B], hyper
// [λ]; outputs = the n gradients (in training mode; zero for running statistics, as
// gradGraph's) of
//
//	L = mean_b CE_b + λ/B · Σ_b weights_b · ‖f_b − targets_b‖²
//
// then L and the features [B, d] (training mode too: what the gradient saw).
func featureGradGraph(net featureNetwork, inputs []*Node) []*Node {
	n := net.numParams()
	params, x, labels, targets, weights, hyper := inputs[:n], inputs[n], inputs[n+1], inputs[n+2], inputs[n+3], inputs[n+4]
	b := x.Shape().Dimensions[0]
	lambda := Reshape(Slice(hyper, AxisElem(0)))
	// λ over the batch's samples, padding rows (label −1, weight 0; gradRows) not counted:
	// exactly λ/B without padding.
	count := ReduceAllSum(ConvertDType(GreaterOrEqual(labels, ScalarZero(x.Graph(), labels.DType())), x.DType()))
	scale := Div(lambda, count)
	w := Reshape(weights, b, 1)
	align := func(feats *Node) (value, dFeats *Node) {
		diff := Sub(feats, targets)
		value = Mul(scale, ReduceAllSum(Mul(w, Mul(diff, diff))))
		two := Scalar(x.Graph(), x.DType(), 2)
		return value, Mul(Mul(two, scale), Mul(w, diff))
	}
	loss, grads, state, feats := net.featurePass(params, x, labels, align)
	return append(append(zeroMissing(grads, params), loss, feats), presentState(state)...)
}

// Features returns the penultimate features of the samples x under params, row-major
// [len(x)/sample, FeatureDim()], computed batch samples at a time in evaluation mode
// (BatchNorm uses its running statistics, as Evaluate does).
func (m *Model) Features(params tensor.List, x []float32, batch int) ([]float32, error) {
	if m.train == nil {
		return nil, errors.New("model is closed")
	}
	if err := m.checkBatches(x, batch); err != nil {
		return nil, fmt.Errorf("features: %w", err)
	}
	if err := m.lazyAux("features", featuresGraph); err != nil {
		return nil, err
	}
	return m.batched(m.aux["features"], params, x, batch, m.FeatureDim(), "features")
}

// FeatureGradient returns, at params, the gradient with respect to every parameter (in
// canonical order) of the mean cross-entropy over the batch (x, y) plus the alignment
// penalty λ/B · Σ_b weights[b]·‖f_b − targets_b‖², where f_b are the batch's features and
// targets is [B, FeatureDim()] row-major (weights[b] = 0 leaves sample b unaligned). It also
// returns that loss and the features. Like Gradient it works in training mode: BatchNorm
// normalizes with the batch's statistics (so the features returned are those, not
// Features' evaluation-mode ones) and the running statistics get zero gradients. With
// λ = 0 the gradient is Gradient's.
func (m *Model) FeatureGradient(params tensor.List, x []float32, y []int32, targets, weights []float32, lambda float32) (tensor.List, float32, []float32, error) {
	if m.train == nil {
		return nil, 0, nil, errors.New("model is closed")
	}
	d := m.FeatureDim()
	if len(targets) != len(y)*d || len(weights) != len(y) {
		return nil, 0, nil, fmt.Errorf("feature gradient: %d targets and %d weights for %d samples of %d features", len(targets), len(weights), len(y), d)
	}
	if err := m.lazyAux("featgrad", featureGradGraph); err != nil {
		return nil, 0, nil, err
	}
	ps, err := m.toTensors(params)
	if err != nil {
		return nil, 0, nil, err
	}
	defer finalize(ps...)
	rows := m.gradRows(len(y))
	xt, yt, err := m.batchTensors(x, y, rows)
	if err != nil {
		return nil, 0, nil, err
	}
	// Padding rows: zero targets and weights.
	tt := tensors.FromFlatDataAndDimensions(zeroRows(targets, rows, d), rows, d)
	wt := tensors.FromFlatDataAndDimensions(zeroRows(weights, rows, 1), rows)
	ht := tensors.FromFlatDataAndDimensions([]float32{lambda}, 1)
	defer finalize(xt, yt, tt, wt, ht)
	args := make([]any, 0, len(ps)+5)
	for _, p := range ps {
		args = append(args, p)
	}
	outs, err := m.aux["featgrad"].Exec(append(args, xt, yt, tt, wt, ht)...)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("feature gradient: %w", err)
	}
	defer finalize(outs...)
	n := len(m.names)
	grads := make(tensor.List, n)
	for i := 0; i < n; i++ {
		data, err := tensors.CopyFlatData[float32](outs[i])
		if err != nil {
			return nil, 0, nil, err
		}
		grads[i] = tensor.Tensor{Name: m.names[i], Shape: append([]int(nil), m.shapes[i]...), Data: data}
	}
	feats, err := tensors.CopyFlatData[float32](outs[n+1])
	if err != nil {
		return nil, 0, nil, err
	}
	if err := m.keepBatchStats(outs[n+2:]); err != nil {
		return nil, 0, nil, err
	}
	return grads, tensors.ToScalar[float32](outs[n]), feats[:len(y)*d], nil
}

// lazyAux compiles one of this file's graphs into m.aux on first use.
func (m *Model) lazyAux(name string, build func(featureNetwork, []*Node) []*Node) error {
	if m.aux == nil {
		m.aux = map[string]*Exec{}
	}
	if m.aux[name] != nil {
		return nil
	}
	fn, ok := m.net.(featureNetwork)
	if !ok {
		return fmt.Errorf("model %s: penultimate features are not available", m.spec.Arch)
	}
	e, err := NewExec(m.backend, func(inputs []*Node) []*Node {
		m.compiles[name]++
		return build(fn, inputs)
	})
	if err != nil {
		return err
	}
	e.SetMaxCache(-1).WithName("fedpipe-" + name + "-" + m.spec.Arch)
	m.aux[name] = e
	return nil
}
