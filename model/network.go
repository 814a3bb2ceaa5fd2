package model

import (
	"slices"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck // GoMLX's idiomatic dot-import.
)

// The network interfaces the step graphs build on (stepgraphs.go), and seqNet, the
// layer chain of net.go behind them.

// network is a model's computation: the seqNet chain of layers (cnn4, fedavgcnn, mlp, logreg) or a
// tapeNet (the ResNet-18s). Parameters are given in canonical order.
type network interface {
	numParams() int
	// trainPass returns the mean cross-entropy of the batch in training mode, the gradient
	// of every trained parameter (nil for running statistics) and the new value of every
	// running statistic (nil for trained parameters).
	trainPass(params []*Node, x, labels *Node) (loss *Node, grads, state []*Node)
	// evalLogits returns the logits [B, classes] in evaluation mode.
	evalLogits(params []*Node, x *Node) *Node
}

// penalty is an extra term of a training loss that depends on the penultimate features
// f [B, d] of the batch: it returns the term's value (a scalar) and its gradient with
// respect to f ([B, d]).
type penalty func(feats *Node) (value, dFeats *Node)

// featureNetwork is a network whose classifier input, the penultimate features, can be
// read and penalized. Every network here is one (seqNet, tapeNetwork); features.go builds
// its graphs from this interface alone.
type featureNetwork interface {
	network
	// featureDim is d, the number of features: the input size of the classifier.
	featureDim() int
	// evalFeatures returns the features [B, d] in evaluation mode (BatchNorm running
	// statistics), as evalLogits sees them.
	evalFeatures(params []*Node, x *Node) *Node
	// featurePass is trainPass (training mode: batch statistics) with pen(f) added to the
	// loss and its gradient to the features' when pen is not nil; it also returns f.
	featurePass(params []*Node, x, labels *Node, pen penalty) (loss *Node, grads, state []*Node, feats *Node)
}

// seqNet is a chain of layers with weight and bias each.
type seqNet []layer

func (ls seqNet) numParams() int { return 2 * len(ls) }

func (ls seqNet) trainPass(params []*Node, x, labels *Node) (loss *Node, grads, state []*Node) {
	return ls.trainPassFrom(params, x, labels, 0)
}

// trainPassFrom is trainPass with the layers before first frozen: their gradients are nil
// and the backward pass stops at layer first (a head-only step computes no body gradient).
// The gradients it does compute are trainPass's, bit for bit.
func (ls seqNet) trainPassFrom(params []*Node, x, labels *Node, first int) (loss *Node, grads, state []*Node) {
	loss, grads = lossAndGrads(ls, params, x, labels, first)
	return loss, grads, make([]*Node, len(params))
}

// frozenLayers returns how many leading layers have every entry of both their tensors
// masked (masks in parameter order, nil: all ones), so that a masked step need not run
// their backward pass; 0 when none is, or when every layer is.
func (ls seqNet) frozenLayers(masks [][]float32) int {
	for i := range ls {
		for _, m := range masks[2*i : 2*i+2] {
			if m == nil || slices.ContainsFunc(m, func(v float32) bool { return v != 0 }) {
				return i
			}
		}
	}
	return 0
}

func (ls seqNet) evalLogits(params []*Node, x *Node) *Node {
	logits, _ := forward(ls, params, x)
	return logits
}

func (ls seqNet) featureDim() int { return ls[len(ls)-1].in }

// bodyForward returns the features [B, d] of x (the flattened input when the chain is the
// classifier alone) and the caches of the layers before the classifier.
func (ls seqNet) bodyForward(params []*Node, x *Node) (*Node, []layerCache) {
	b := x.Shape().Dimensions[0]
	body := ls[:len(ls)-1]
	if len(body) == 0 {
		return Reshape(x, b, ls.featureDim()), nil
	}
	h, caches := forward(body, params[:2*len(body)], x)
	return Reshape(h, b, ls.featureDim()), caches
}

func (ls seqNet) evalFeatures(params []*Node, x *Node) *Node {
	f, _ := ls.bodyForward(params, x)
	return f
}

func (ls seqNet) featurePass(params []*Node, x, labels *Node, pen penalty) (loss *Node, grads, state []*Node, feats *Node) {
	n := ls.numParams()
	body, cl := ls[:len(ls)-1], ls[len(ls)-1]
	feats, caches := ls.bodyForward(params, x)
	logits, cc := fcForward(feats, params[n-2], params[n-1], cl)
	perSample, dLogits, count := crossEntropy(logits, labels)
	loss = Div(ReduceAllSum(perSample), count)
	grads = make([]*Node, n)
	var dFeats *Node
	grads[n-2], grads[n-1], dFeats = fcBackward(dLogits, params[n-2], cl, cc, len(body) > 0)
	if pen != nil {
		value, dPen := pen(feats)
		loss = Add(loss, value)
		if len(body) > 0 {
			dFeats = Add(dFeats, dPen)
		}
	}
	if len(body) > 0 {
		copy(grads, backward(body, params[:n-2], caches, dFeats))
	}
	return loss, grads, make([]*Node, n), feats
}
