package model

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck // GoMLX's idiomatic dot-import.
)

// The step graphs a Session compiles: an SGD step (plain, masked, masked with frozen
// leading layers, proximal), a gradient,
// and the evaluation passes, each over any network (network.go).

// trainStepGraph builds one SGD step. inputs = params (n), momentum buffers (n), x, labels,
// hyper = [lr, momentum, weight decay] (no weight decay: [lr, momentum]); outputs = new params (n), new momentum (n), loss.
// PyTorch SGD semantics: d = g + wd·θ; buf = m·buf + d; θ = θ − lr·buf (no dampening, not
// Nesterov; a zero initial buffer gives PyTorch's first step buf = d). Running statistics
// take their new values from the forward pass; their momentum buffers stay as they are.
func trainStepGraph(net network, inputs []*Node) []*Node {
	return sgdStepGraph(net, inputs, false, false)
}

// maskedTrainStepGraph is trainStepGraph with a 0/1 update mask per parameter: inputs =
// params (n), momentum (n), masks (n), x, labels, hyper. Only entries whose mask is 1 move:
//
//	buf = Momentum·buf + mask·(g + WeightDecay·θ);  θ -= LR·mask·buf
//
// so a masked entry keeps its value exactly. With an all-ones mask every product by the
// mask is exact, and the step equals trainStepGraph's bit for bit. Masks do not apply to
// running statistics, which are not trained.
func maskedTrainStepGraph(net network, inputs []*Node) []*Node {
	return sgdStepGraph(net, inputs, true, false)
}

// proxTrainStepGraph is maskedTrainStepGraph plus a proximal term μ/2·‖θ − ref‖², whose
// gradient μ·(θ − ref) joins the loss gradient (FedProx, Ditto): inputs = params (n),
// momentum (n), masks (n), refs (n), x, labels, hyper [lr, momentum, weight decay, μ] (no weight decay: [lr, momentum, μ]).
func proxTrainStepGraph(net network, inputs []*Node) []*Node {
	return sgdStepGraph(net, inputs, true, true)
}

// frozenTrainStepGraph returns maskedTrainStepGraph for masks that freeze the first
// layers of a seqNet whole (seqNet.frozenLayers): those layers' backward pass is not built,
// their parameters come out as they went in and their momentum only decays, which is what
// the masked step computes for them (a zero mask times a finite update); every other
// output is the masked step's, by the same operations.
func frozenTrainStepGraph(layers int) func(network, []*Node) []*Node {
	return func(net network, inputs []*Node) []*Node {
		return sgdStepGraphFrom(net, inputs, true, false, layers)
	}
}

// sgdStepGraph builds the three step variants above from one description, so their
// arithmetic cannot drift apart: with masked, inputs hold n masks after the momentum
// buffers; with prox, n reference tensors after the masks and μ as hyper's last entry.
func sgdStepGraph(net network, inputs []*Node, masked, prox bool) []*Node {
	return sgdStepGraphFrom(net, inputs, masked, prox, 0)
}

// sgdStepGraphFrom is sgdStepGraph with the first frozen layers of a seqNet left out of
// the backward pass (frozen > 0 only with masked, on a seqNet).
func sgdStepGraphFrom(net network, inputs []*Node, masked, prox bool, frozen int) []*Node {
	n := net.numParams()
	params, moms := inputs[:n], inputs[n:2*n]
	rest := inputs[2*n:]
	var masks, refs []*Node
	if masked {
		masks, rest = rest[:n], rest[n:]
	}
	if prox {
		refs, rest = rest[:n], rest[n:]
	}
	x, labels, hyper := rest[0], rest[1], rest[2]
	var loss *Node
	var grads, state []*Node
	if frozen > 0 {
		loss, grads, state = net.(seqNet).trainPassFrom(params, x, labels, frozen)
	} else {
		loss, grads, state = net.trainPass(params, x, labels)
	}
	// hyper is [lr, momentum, weight decay (, μ)], or without the weight decay when it is 0
	// (see Session.hyperTensor): then the graph leaves out its two passes over every
	// parameter, with the same results bit for bit (g + 0·θ differs from g only in the sign
	// of a zero, which the momentum buffer, never −0, absorbs).
	hyperLen := hyper.Shape().Dimensions[0]
	decay := (!prox && hyperLen == 3) || (prox && hyperLen == 4)
	lr := Reshape(Slice(hyper, AxisElem(0)))
	mom := Reshape(Slice(hyper, AxisElem(1)))
	var wd, mu *Node
	if decay {
		wd = Reshape(Slice(hyper, AxisElem(2)))
	}
	if prox {
		mu = Reshape(Slice(hyper, AxisElem(hyperLen-1)))
	}
	outs := make([]*Node, 0, 2*n+1)
	newMoms := make([]*Node, n)
	for i, p := range params {
		if state[i] != nil {
			outs = append(outs, state[i])
			newMoms[i] = moms[i]
			continue
		}
		if i < 2*frozen {
			outs = append(outs, p)
			newMoms[i] = Mul(mom, moms[i])
			continue
		}
		d := grads[i]
		if decay {
			d = Add(d, Mul(wd, p))
		}
		if prox {
			d = Add(d, Mul(mu, Sub(p, refs[i])))
		}
		if masked {
			d = Mul(masks[i], d)
		}
		newMoms[i] = Add(Mul(mom, moms[i]), d)
		update := newMoms[i]
		if masked {
			update = Mul(masks[i], update)
		}
		outs = append(outs, Sub(p, Mul(lr, update)))
	}
	outs = append(outs, newMoms...)
	return append(outs, loss)
}

// gradGraph builds the gradient of the mean cross-entropy (in training mode): inputs =
// params (n), x, labels; outputs = the n gradients, zero for running statistics.
func gradGraph(net network, inputs []*Node) []*Node {
	n := net.numParams()
	_, grads, state := net.trainPass(inputs[:n], inputs[n], inputs[n+1])
	return append(zeroMissing(grads, inputs), presentState(state)...)
}

// zeroMissing replaces the nil gradients (running statistics) by zeros shaped like their
// parameter.
func zeroMissing(grads, params []*Node) []*Node {
	for i, g := range grads {
		if g == nil {
			grads[i] = ZerosLike(params[i])
		}
	}
	return grads
}

// presentState lists the new running statistics of a training pass (its non-nil state
// entries) in parameter order: the extra outputs Model.BatchStats reads.
func presentState(state []*Node) []*Node {
	var out []*Node
	for _, s := range state {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// evalGraph builds the evaluation: inputs = params (n), x, labels; outputs = the sum of
// per-sample cross-entropies and the number of correct argmax predictions (int32). Rows
// with a negative label (padding) count for neither.
func evalGraph(net network, inputs []*Node) []*Node {
	n := net.numParams()
	params, x, labels := inputs[:n], inputs[n], inputs[n+1]
	logits := net.evalLogits(params, x)
	perSample, _, _ := crossEntropy(logits, labels)
	pred := ArgMax(logits, 1, dtypes.Int32)
	correct := ReduceAllSum(ConvertDType(Equal(pred, labels), dtypes.Int32))
	return []*Node{ReduceAllSum(perSample), correct}
}

// evalRowsGraph is evalGraph without the sums over the batch: outputs = the per-sample
// cross-entropies [B] and whether each argmax prediction is right ([B] int32, 0 or 1), both
// zero on padding rows (negative labels). Model.Evaluate sums them.
func evalRowsGraph(net network, inputs []*Node) []*Node {
	n := net.numParams()
	params, x, labels := inputs[:n], inputs[n], inputs[n+1]
	logits := net.evalLogits(params, x)
	perSample, _, _ := crossEntropy(logits, labels)
	pred := ArgMax(logits, 1, dtypes.Int32)
	return []*Node{perSample, ConvertDType(Equal(pred, labels), dtypes.Int32)}
}
