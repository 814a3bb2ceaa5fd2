package model

import (
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck // GoMLX's idiomatic dot-import.
)

// The convolution layers' graph form on XLA: GoMLX's native convolution (ConvGeneral, XLA's
// convolution) and max-pooling (MaxPool, XLA's reduce-window), with the backward pass
// written as XLA's own ops too: the weight gradient is a convolution of the input with the
// output gradient, the input gradient a convolution of the output gradient with the
// spatially reversed kernel, and max-pooling's gradient is the one GoMLX's autodiff gives
// (SelectAndScatter: each window's gradient goes to its first maximal element in row-major
// window order, XLA's GE selection; the CPU form's ArgMax picks the same element, so ties
// route alike, but the sums are XLA's own and its bits are not the CPU form's). A GPU runs
// these on its convolution engines (cuDNN) instead of the im2col gathers and scatters
// written for the CPU (net.go, multi.go).
//
// Layout: images are NHWC with several clients' images side by side in the channels,
// [B, h, w, C·c] (client-major channels), so C clients' convolutions are one grouped
// convolution (feature group count C) and their weight gradients another; a single
// client is C = 1. The lockstep step keeps that layout from one convolution layer to the
// next and transposes only at the input and at the first dense layer.
//
// A seqNet's conv layers take this form when their native flag is set (nativeConvs): on
// the XLA backends (Model.nativeConv), never on fpfast or fpcpu, whose graphs stay the
// im2col form.

// nativeConvs returns net with its convolution layers in the native form; other networks
// (the ResNets) as they are.
func nativeConvs(net network) network {
	ls, ok := net.(seqNet)
	if !ok {
		return net
	}
	out := make(seqNet, len(ls))
	for i, l := range ls {
		l.native = l.kind == layerConv
		out[i] = l
	}
	return out
}

// nhwc is the axes of an NHWC convolution with an HWIO kernel.
var nhwc = ConvolveAxesConfig{
	InputBatch: 0, InputSpatial: []int{1, 2}, InputChannels: 3,
	KernelSpatial: []int{0, 1}, KernelInputChannels: 2, KernelOutputChannels: 3,
	OutputBatch: 0, OutputSpatial: []int{1, 2}, OutputChannels: 3,
}

// unit is a stride or dilation of 1 on both spatial axes.
var unit = []int{1, 1}

// symmetric is padding p on both sides of both spatial axes.
func symmetric(p int) [][2]int { return [][2]int{{p, p}, {p, p}} }

// toGrouped moves the clients of x [C·B, h, w, c] (client-major) beside the channels:
// [B, h, w, C·c].
func toGrouped(x *Node, clients, b, h, w, c int) *Node {
	if clients == 1 {
		return Reshape(x, b, h, w, c)
	}
	return Reshape(TransposeAllAxes(Reshape(x, clients, b, h, w, c), 1, 2, 3, 0, 4), b, h, w, clients*c)
}

// fromGrouped is toGrouped's inverse: [B, h, w, C·c] to [C, B, h, w, c].
func fromGrouped(x *Node, clients int) *Node {
	d := x.Shape().Dimensions
	b, h, w, c := d[0], d[1], d[2], d[3]/clients
	if clients == 1 {
		return Reshape(x, 1, b, h, w, c)
	}
	return TransposeAllAxes(Reshape(x, b, h, w, clients, c), 3, 0, 1, 2, 4)
}

// nativeConvForward runs layer l (convolution with zero padding l.pad and bias, 2×2
// max-pooling that floors odd sizes, ReLU) on x [B, h, w, C·cin] for C clients whose
// weights are weight ([C, k, k, cin, cout], or [k, k, cin, cout] when C = 1) and bias
// ([C, cout] or [cout]): [B, ph, pw, C·cout], with the cache nativeConvBackward needs.
func nativeConvForward(x, weight, bias *Node, l layer, clients int) (*Node, layerCache) {
	// The kernel [k, k, cin, C·cout]: client c's output channels are group c's.
	var kernel *Node
	if clients == 1 {
		kernel = Reshape(weight, l.k, l.k, l.cin, l.cout)
	} else {
		kernel = Reshape(TransposeAllAxes(Reshape(weight, clients, l.k, l.k, l.cin, l.cout), 1, 2, 3, 0, 4),
			l.k, l.k, l.cin, clients*l.cout)
	}
	z := ConvGeneral(x, kernel, nhwc, unit, symmetric(l.pad), unit, unit, clients, 1)
	z = Add(z, Reshape(bias, 1, 1, 1, clients*l.cout))
	mx := MaxPool(z).Window(poolSize).Done() // stride = window, no padding: floors odd sizes.
	zero := ScalarZero(x.Graph(), x.DType())
	// As in poolForward: ReLU after pooling, Max(x, 0) keeps NaNs, the gradient passes
	// where the max is positive.
	return Max(mx, zero), layerCache{in: x, z: z, mx: mx, pos: GreaterThan(mx, zero)}
}

// nativeConvBackward takes the gradient of nativeConvForward's output [B, ph, pw, C·cout]
// and returns the gradients of the weight and bias (shaped as nativeConvForward took them)
// and, if needInput, of the input ([B, h, w, C·cin]).
func nativeConvBackward(dOut, weight *Node, l layer, c layerCache, clients int, needInput bool) (dW, dB, dX *Node) {
	g, dtype := dOut.Graph(), dOut.DType()
	d := c.in.Shape().Dimensions
	b := d[0]
	dMax := Where(c.pos, dOut, ScalarZero(g, dtype))
	// Max-pooling's gradient as GoMLX's autodiff takes it (one SelectAndScatter from the
	// pooling's own node): the gradient of Σ mx·dMax with respect to z, dMax held constant.
	// The seed's multiplication by one is exact.
	dz := Gradient(ReduceAllSum(Mul(c.mx, StopGradient(dMax))), c.z)[0] // [B, oh, ow, C·cout]
	dB = ReduceSum(dz, 0, 1, 2)
	// Weight gradient: a convolution of the input, its images' samples as channels
	// ([cin, h, w, C·B], client-major), with dz as the kernel (in: B, out: C·cout), grouped
	// by client: [k, k, cin, C·cout].
	xt := Reshape(TransposeAllAxes(Reshape(c.in, b, l.h, l.w, clients, l.cin), 4, 1, 2, 3, 0), l.cin, l.h, l.w, clients*b)
	wAxes := ConvolveAxesConfig{
		InputBatch: 0, InputSpatial: []int{1, 2}, InputChannels: 3,
		KernelInputChannels: 0, KernelSpatial: []int{1, 2}, KernelOutputChannels: 3,
		OutputBatch: 2, OutputSpatial: []int{0, 1}, OutputChannels: 3,
	}
	gw := ConvGeneral(xt, dz, wAxes, unit, symmetric(l.pad), unit, unit, clients, 1)
	if clients == 1 {
		dW = Reshape(gw, l.k, l.k, l.cin, l.cout)
		dB = Reshape(dB, l.cout)
	} else {
		dW = TransposeAllAxes(Reshape(gw, l.k, l.k, l.cin, clients, l.cout), 3, 0, 1, 2, 4)
		dB = Reshape(dB, clients, l.cout)
	}
	if needInput {
		// Input gradient: dz convolved with the spatially reversed kernel, its input and
		// output channels swapped ([k, k, C·cin, cout]: out C·cin, in cout), padded by
		// k−1−pad, grouped by client: [B, h, w, C·cin].
		var rk *Node
		if clients == 1 {
			rk = Reshape(weight, l.k, l.k, l.cin, l.cout)
		} else {
			rk = Reshape(TransposeAllAxes(Reshape(weight, clients, l.k, l.k, l.cin, l.cout), 1, 2, 0, 3, 4),
				l.k, l.k, clients*l.cin, l.cout)
		}
		rk = Reverse(rk, 0, 1)
		xAxes := nhwc
		xAxes.KernelInputChannels, xAxes.KernelOutputChannels = 3, 2
		dX = ConvGeneral(dz, rk, xAxes, unit, symmetric(l.k-1-l.pad), unit, unit, clients, 1)
	}
	return dW, dB, dX
}
