package model

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck // GoMLX's idiomatic dot-import.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// The graphs in this file compute the forward pass and, by hand, the backward pass of the
// networks described by ModelSpec. Writing the backward pass explicitly (rather than with
// graph.Gradient) keeps every op one that GoMLX's pure-Go engine runs well: convolutions are
// im2col (one Gather of pixel rows) and one DotGeneral; their input gradient is one
// DotGeneral followed by col2im (one ScatterSum); convolution rows come window by window,
// so max-pooling is one ReduceMax and one ArgMax forward and one ScatterSum back; dense
// layers and all weight gradients are single DotGenerals (GoMLX's DotGeneral gradient
// would materialize a [batch, in, out] product). (XLA's lockstep step takes col2im as a
// Gather and a ReduceSum instead: multiCol2im in multi.go.) On the XLA backends the conv
// layers take the native form instead: XLA's convolution and reduce-window (native.go).
//
// The graphs are dtype-generic (the dtype of the parameters), so tests can check gradients
// in float64. Only deterministic ops are used and there is no randomness.

// zeros returns a constant zero tensor.
func zeros(g *Graph, dtype dtypes.DType, dims ...int) *Node {
	return BroadcastToDims(Scalar(g, dtype, 0), dims...)
}

// layerCache keeps what the backward pass of one layer needs from the forward pass.
type layerCache struct {
	in *Node // conv: im2col matrix [B·oh·ow, k·k·cin]; fc: input [B, in].
	// conv only: the flat index in the convolution's output [B·oh·ow·cout] of each pooling
	// window's first maximal element ([B·ph·pw·cout, 1] int32), and where that max is
	// positive (ReLU passes it; [B·ph·pw, cout] bool).
	at, pos *Node
	// conv only: the weight as the [k·k·cin, cout] matrix of the forward product, which the
	// input gradient reuses (a second Reshape of the weight would copy it again).
	wm *Node
	// fc only: the pre-activation output.
	z *Node
	// native conv only (native.go): in is the input [B, h, w, C·cin], z the convolution's
	// output with bias (pre-pooling), mx the pooling's max (the MaxPool node whose gradient
	// routes the pooling's), pos where mx is positive.
	mx *Node
}

// im2col extracts the k×k patches of x [B, h, w, c], zero-padded by pad on every side,
// whose top-left corner lies in [0, oh)×[0, ow) of the padded image: a [B·oh·ow, k·k·c]
// matrix with columns ordered (kernel row, kernel col, c) and, within each sample, rows in
// pooled order (see pooledPositions). It is one Gather of the c-element pixel rows of x (a
// pure copy), in that order; with padding, positions outside the image read one zero row
// appended to x's rows.
func im2col(x *Node, k, pad, oh, ow int) *Node {
	dims := x.Shape().Dimensions
	b, h, w, c := dims[0], dims[1], dims[2], dims[3]
	return Reshape(Gather(padRows(Reshape(x, b*h*w, c), pad), Const(x.Graph(), im2colIndices(b, h, w, k, pad, oh, ow))), b*oh*ow, k*k*c)
}

// padRows appends the zero row that padded positions of im2colIndices read (pad > 0) to
// rows [n, c]; without padding it returns rows.
func padRows(rows *Node, pad int) *Node {
	if pad == 0 {
		return rows
	}
	return withZeroRow(rows)
}

// withZeroRow returns rows [n, c] with one row of zeros appended: [n+1, c].
func withZeroRow(rows *Node) *Node {
	return Concatenate([]*Node{rows, zeros(rows.Graph(), rows.DType(), 1, rows.Shape().Dimensions[1])}, 0)
}

// pooledPositions returns the output positions (row, col) of a convolution over an oh×ow
// grid in the order its rows are computed: the 2×2 pooling windows one after another (by
// window row and column), each window's four positions row-major, then the positions no
// window covers (the last row or column of an odd size). A window's four outputs are then
// four consecutive rows, which the pooling reduces in one pass (poolForward).
func pooledPositions(oh, ow int) [][2]int {
	ph, pw := oh/poolSize, ow/poolSize
	out := make([][2]int, 0, oh*ow)
	for pi := range ph {
		for pj := range pw {
			for di := range poolSize {
				for dj := range poolSize {
					out = append(out, [2]int{pi*poolSize + di, pj*poolSize + dj})
				}
			}
		}
	}
	for r := range oh {
		for col := range ow {
			if r >= ph*poolSize || col >= pw*poolSize {
				out = append(out, [2]int{r, col})
			}
		}
	}
	return out
}

// im2colIndices returns the pixel index (in [0, b·h·w)) of every row of im2col's output,
// taken as a c-element row, or b·h·w (the zero row padRows appends) where the position lies
// in the padding: [b·oh·ow·k·k, 1] int32, ordered (sample, output position in
// pooledPositions order, kernel row, kernel col).
func im2colIndices(b, h, w, k, pad, oh, ow int) *tensors.Tensor {
	idx := im2colIndexList(b, h, w, k, pad, oh, ow)
	return tensors.FromFlatDataAndDimensions(idx, len(idx), 1)
}

// im2colIndexList is im2colIndices' values.
func im2colIndexList(b, h, w, k, pad, oh, ow int) []int32 {
	positions := pooledPositions(oh, ow)
	zero := int32(b * h * w)
	idx := make([]int32, 0, b*oh*ow*k*k)
	for s := range b {
		for _, p := range positions {
			for i := range k {
				y := p[0] + i - pad
				for j := range k {
					x := p[1] + j - pad
					if y < 0 || y >= h || x < 0 || x >= w {
						idx = append(idx, zero)
					} else {
						idx = append(idx, int32((s*h+y)*w+x))
					}
				}
			}
		}
	}
	return idx
}

// col2im is the adjoint of im2col for the convolution layer l: it returns [B, h, w, c],
// where each pixel is the sum of the patch entries of cols [B·oh·ow, k·k·c] (im2col's
// layout) that im2col took from it. It is one ScatterSum of cols' c-element rows at
// im2col's own indices (scatterPixels), so each pixel adds its contributions in the order of
// the rows of cols (by patch, then kernel row and column), reading cols once: the Gather of
// every pixel's k·k rows plus a ReduceSum it replaces wrote and read k·k times the image.
func col2im(cols *Node, b int, l layer) *Node {
	oh, ow := l.convOut()
	rows := Reshape(cols, b*oh*ow*l.k*l.k, l.cin)
	return Reshape(scatterPixels(rows, b, l), b, l.h, l.w, l.cin)
}

// scatterPixels adds rows [b·oh·ow·k·k, width] (one per patch entry of layer l's im2col of
// b images, in its order) into zeros at the pixels im2col took them from: [b·h·w, width].
// Entries im2col took from the padding add into one extra row, which is dropped.
func scatterPixels(rows *Node, b int, l layer) *Node {
	oh, ow := l.convOut()
	n, width := b*l.h*l.w, rows.Shape().Dimensions[1]
	if l.pad > 0 {
		n++
	}
	g := rows.Graph()
	sum := ScatterSum(Zeros(g, shapes.Make(rows.DType(), n, width)), Const(g, im2colIndices(b, l.h, l.w, l.k, l.pad, oh, ow)), rows, false, false)
	if l.pad > 0 {
		sum = Slice(sum, AxisRange(0, n-1), AxisRange())
	}
	return sum
}

// convForward runs conv (stride 1, zero padding l.pad, bias) → maxpool2 → ReLU on x
// [B, h, w, cin], returning [B, ph, pw, cout]. ReLU after pooling equals PyTorch's ReLU before pooling
// (max and ReLU commute) and touches 4× fewer values. A native layer (XLA) takes the
// native form instead (nativeConvForward).
func convForward(x, weight, bias *Node, l layer) (*Node, layerCache) {
	if l.native {
		return nativeConvForward(x, weight, bias, l, 1)
	}
	b := x.Shape().Dimensions[0]
	oh, ow := l.convOut()
	cols := im2col(x, l.k, l.pad, oh, ow)
	wm := Reshape(weight, l.k*l.k*l.cin, l.cout)
	z := DotGeneral(cols, []int{1}, nil, wm, []int{0}, nil)
	z = Add(z, Reshape(bias, 1, l.cout))
	out, c := poolForward(z, b, 1, l)
	c.in, c.wm = cols, wm
	return out, c
}

// poolForward runs maxpool2 → ReLU on a convolution's output z [B·oh·ow, cout] (rows in
// pooledPositions order within each sample) and returns [B, ph, pw, cout] with the pooling
// part of the layer's cache. Each window's four rows are consecutive, so one ArgMax finds
// every window's first maximal element (the one PyTorch's max-pool passes the gradient to;
// ArgMax keeps the first of equal elements) and one Gather reads it. With clients > 1, z
// holds clients equal batches of b/clients samples one after another (multiForward), and the
// window offsets are one batch's constant plus each batch's start (so the constant does not
// grow with the clients); the indices are the same.
func poolForward(z *Node, b, clients int, l layer) (*Node, layerCache) {
	g, dtype := z.Graph(), z.DType()
	oh, ow := l.convOut()
	ph, pw := oh/poolSize, ow/poolSize
	windows, per := b*ph*pw, poolSize*poolSize
	zw := z
	if win := windows * per; win != b*oh*ow { // Pooling floors odd sizes: drop the rows no window covers.
		zw = Slice(Reshape(z, b, oh*ow, l.cout), AxisRange(), AxisRange(0, ph*pw*per), AxisRange())
	}
	zr := Reshape(zw, windows, per, l.cout)
	arg := ArgMax(zr, 1, dtypes.Int32)
	// Window p's chosen element in channel ch is in row arg of the window's four, which
	// start at row p·4 of z plus the uncovered rows of the samples before p's:
	// flat index = arg·cout + base[p, ch].
	bw := windows / clients // one batch's windows
	base := make([]int32, bw*l.cout)
	perSample := ph * pw
	for p := range bw {
		row := (p/perSample)*oh*ow + (p%perSample)*per
		for ch := range l.cout {
			base[p*l.cout+ch] = int32(row*l.cout + ch)
		}
	}
	offsets := Const(g, tensors.FromFlatDataAndDimensions(base, bw, l.cout))
	if clients > 1 {
		starts := Mul(Iota(g, shapes.Make(dtypes.Int32, clients, 1, 1), 0), Scalar(g, dtypes.Int32, (b/clients)*oh*ow*l.cout))
		offsets = Reshape(Add(Reshape(offsets, 1, bw, l.cout), starts), windows, l.cout)
	}
	var c layerCache
	c.at = Reshape(Add(Mul(arg, Scalar(g, dtypes.Int32, l.cout)), offsets), windows*l.cout, 1)
	// The Gather reads z through zr when they hold the same values: z then has one consumer
	// and zr's last is this Reshape, so neither copies its buffer (a Reshape of a value
	// still needed later copies it).
	flat := z
	if zw == z {
		flat = zr
	}
	mx := Reshape(Gather(Reshape(flat, b*oh*ow*l.cout, 1), c.at), windows, l.cout)
	zero := ScalarZero(g, dtype)
	// ReLU stays Max(x, 0), which keeps a NaN (a diverging run must show in its loss); the
	// backward pass routes the gradient where the max is positive.
	c.pos = GreaterThan(mx, zero)
	return Reshape(Max(mx, zero), b, ph, pw, l.cout), c
}

// convBackward takes the gradient of convForward's output and returns the gradients of the
// weight, the bias and (if needInput) the input; a native layer's is nativeConvBackward.
func convBackward(dOut, weight *Node, l layer, c layerCache, needInput bool) (dW, dB, dX *Node) {
	if l.native {
		return nativeConvBackward(dOut, weight, l, c, 1, needInput)
	}
	b := dOut.Shape().Dimensions[0]
	dz := poolBackward(dOut, l, c)
	kk := l.k * l.k * l.cin
	dW = Reshape(DotGeneral(c.in, []int{0}, nil, dz, []int{0}, nil), l.k, l.k, l.cin, l.cout)
	dB = ReduceSum(dz, 0)
	if needInput {
		wm := c.wm
		if wm == nil {
			wm = Reshape(weight, kk, l.cout)
		}
		dCols := DotGeneral(dz, []int{1}, nil, wm, []int{1}, nil)
		dX = col2im(dCols, b, l)
	}
	return dW, dB, dX
}

// poolBackward takes the gradient of poolForward's output [B, ph, pw, cout] and returns the
// gradient of the convolution's output, [B·oh·ow, cout] in its row order: where the pooled
// max is positive (ReLU), each window's gradient goes to its first maximal element, as in
// PyTorch, and every other element gets 0. That is one ScatterSum of the window gradients,
// one value each, into zeros at the elements poolForward chose.
func poolBackward(dOut *Node, l layer, c layerCache) *Node {
	g, dtype := dOut.Graph(), dOut.DType()
	b := dOut.Shape().Dimensions[0]
	oh, ow := l.convOut()
	windows := b * (oh / poolSize) * (ow / poolSize)
	zero := ScalarZero(g, dtype)
	dMax := Where(c.pos, Reshape(dOut, windows, l.cout), zero)
	dz := ScatterSum(Zeros(g, shapes.Make(dtype, b*oh*ow*l.cout, 1)), c.at, Reshape(dMax, windows*l.cout, 1), false, true)
	return Reshape(dz, b*oh*ow, l.cout)
}

// fcForward runs x [B, in] · W + b, then ReLU if l.relu.
func fcForward(x, weight, bias *Node, l layer) (*Node, layerCache) {
	z := DotGeneral(x, []int{1}, nil, weight, []int{0}, nil)
	z = Add(z, Reshape(bias, 1, l.out))
	c := layerCache{in: x, z: z}
	if l.relu {
		return Max(z, ScalarZero(x.Graph(), x.DType())), c
	}
	return z, c
}

// fcBackward returns the gradients of weight, bias and (if needInput) input.
func fcBackward(dOut, weight *Node, l layer, c layerCache, needInput bool) (dW, dB, dX *Node) {
	dz := dOut
	if l.relu {
		zero := ScalarZero(dOut.Graph(), dOut.DType())
		dz = Where(GreaterThan(c.z, zero), dOut, zero)
	}
	dW = DotGeneral(c.in, []int{0}, nil, dz, []int{0}, nil)
	dB = ReduceSum(dz, 0)
	if needInput {
		dX = DotGeneral(dz, []int{1}, nil, weight, []int{1}, nil)
	}
	return dW, dB, dX
}

// forward computes the logits [B, classes] of x (a batch shaped [B, InputShape...]) and the
// caches for backward.
func forward(ls []layer, params []*Node, x *Node) (*Node, []layerCache) {
	b := x.Shape().Dimensions[0]
	caches := make([]layerCache, len(ls))
	h := x
	for i, l := range ls {
		w, bias := params[2*i], params[2*i+1]
		switch l.kind {
		case layerConv:
			h = Reshape(h, b, l.h, l.w, l.cin)
			h, caches[i] = convForward(h, w, bias, l)
		case layerFC:
			h = Reshape(h, b, l.in)
			h, caches[i] = fcForward(h, w, bias, l)
		}
	}
	return h, caches
}

// backward returns the gradients of all parameters (same order as params) given the
// gradient of the logits.
func backward(ls []layer, params []*Node, caches []layerCache, dLogits *Node) []*Node {
	return backwardFrom(ls, params, caches, dLogits, 0)
}

// backwardFrom is backward stopped at layer first: the gradients of layers first and above,
// by the same operations as backward's, and nil for the layers below, whose backward pass
// (and the input gradient of layer first) is not built.
func backwardFrom(ls []layer, params []*Node, caches []layerCache, dLogits *Node, first int) []*Node {
	b := dLogits.Shape().Dimensions[0]
	grads := make([]*Node, len(params))
	d := dLogits
	for i := len(ls) - 1; i >= first; i-- {
		l := ls[i]
		w := params[2*i]
		needInput := i > first
		switch l.kind {
		case layerConv:
			oh, ow := l.convOut()
			d = Reshape(d, b, oh/poolSize, ow/poolSize, l.cout)
			grads[2*i], grads[2*i+1], d = convBackward(d, w, l, caches[i], needInput)
		case layerFC:
			d = Reshape(d, b, l.out)
			grads[2*i], grads[2*i+1], d = fcBackward(d, w, l, caches[i], needInput)
		}
	}
	return grads
}

// crossEntropy returns the per-sample softmax cross-entropy [B] of logits [B, K] against
// labels [B] (int32), the gradient of the mean loss with respect to the logits, and the
// number of samples the mean is over (a scalar of the logits' dtype).
//
// A negative label marks a padding row (see Model.Step: a ragged batch is padded to the
// compiled batch size): its loss and its row of dLogits are exactly zero and it is not
// counted, so the mean and every gradient are those of the real samples alone. On fpfast
// this is bit-identical to running the short batch: each real row is computed by the same
// operations, and the zero rows only add exact zeros at the end of every reduction over the
// batch (GEMM contractions and ReduceSum take their terms in order from a +0 start; see
// packages gemm and fastcpu). With no padding rows count is B, computed exactly, and the
// results equal the unmasked computation bit for bit.
func crossEntropy(logits, labels *Node) (perSample, dLogits, count *Node) {
	g, dtype := logits.Graph(), logits.DType()
	dims := logits.Shape().Dimensions
	b, k := dims[0], dims[1]
	zero := ScalarZero(g, dtype)
	valid := GreaterOrEqual(labels, ScalarZero(g, labels.DType()))
	count = ReduceAllSum(ConvertDType(valid, dtype))
	shifted := Sub(logits, Reshape(ReduceMax(logits, 1), b, 1))
	lse := Log(ReduceSum(Exp(shifted), 1))
	logp := Sub(shifted, Reshape(lse, b, 1))
	classes := Iota(g, shapes.Make(dtypes.Int32, b, k), 1)
	oneHot := ConvertDType(Equal(classes, BroadcastToDims(Reshape(labels, b, 1), b, k)), dtype)
	perSample = Where(valid, Neg(ReduceSum(Mul(oneHot, logp), 1)), zero)
	validRows := BroadcastToDims(Reshape(valid, b, 1), b, k)
	dLogits = Where(validRows, Div(Sub(Exp(logp), oneHot), count), zero)
	return perSample, dLogits, count
}

// lossAndGrads is the training computation without the optimizer: mean loss and the
// gradients of layers first and above (backwardFrom; nil below, 0: every layer).
func lossAndGrads(ls []layer, params []*Node, x, labels *Node, first int) (loss *Node, grads []*Node) {
	logits, caches := forward(ls, params, x)
	perSample, dLogits, count := crossEntropy(logits, labels)
	loss = Div(ReduceAllSum(perSample), count)
	return loss, backwardFrom(ls, params, caches, dLogits, first)
}
