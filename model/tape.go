package model

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck // GoMLX's idiomatic dot-import.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// This file is a small reverse-mode differentiator over GoMLX nodes for the networks that
// are not a plain chain of layers (the ResNet-18s): every op records its forward
// value and a closure that, run in reverse order, adds its inputs' gradients. The ops are
// the same few GoMLX's pure-Go engine runs well (see net.go): convolutions are one Gather
// of pixel rows (im2col, with stride and zero padding folded into the indices) and one
// DotGeneral; their input gradient and max-pooling's gradient are one Gather of window
// rows and one ReduceSum (the adjoint of the im2col gather).

// tv is a value on the tape: a node and, after backward, the gradient of the loss with
// respect to it (nil while nothing flows into it).
type tv struct {
	n        *Node
	g        *Node
	needGrad bool
}

// addGrad accumulates d into v's gradient.
func (v *tv) addGrad(d *Node) {
	if !v.needGrad {
		return
	}
	if v.g == nil {
		v.g = d
	} else {
		v.g = Add(v.g, d)
	}
}

// tape records backward closures in forward order.
type tape struct {
	backs []func()
	// record is false in evaluation: no closure is kept and no gradient flows.
	record bool
	// frozenBN makes BatchNorm in a recorded (training) pass behave as in evaluation: it
	// normalizes with the running statistics and leaves them unchanged, while gradients
	// still flow (PyTorch training a model left in eval() mode; ModelSpec.FrozenBN).
	frozenBN bool
	// macs, when not nil, accumulates per weight value the multiply-accumulates of one
	// forward pass of the batch (ModelSpec.MACs).
	macs map[*tv]int64
}

// out wraps a forward result; it needs a gradient if any input does.
func (t *tape) out(n *Node, back func(out *tv), inputs ...*tv) *tv {
	o := &tv{n: n}
	for _, in := range inputs {
		o.needGrad = o.needGrad || in.needGrad
	}
	if t.record && o.needGrad {
		t.backs = append(t.backs, func() {
			if o.g != nil {
				back(o)
			}
		})
	}
	return o
}

// backward runs the recorded closures in reverse order.
func (t *tape) backward() {
	for i := len(t.backs) - 1; i >= 0; i-- {
		t.backs[i]()
	}
}

// window describes a k×k window sliding with the given stride over a zero-padded h×w
// image, PyTorch's Conv2d/MaxPool2d geometry: out = ⌊(h + 2·pad − k)/stride⌋ + 1.
type window struct {
	h, w, k, stride, pad int
}

func (g window) outH() int { return (g.h+2*g.pad-g.k)/g.stride + 1 }
func (g window) outW() int { return (g.w+2*g.pad-g.k)/g.stride + 1 }

// slots is the most windows any one pixel falls in: ⌈k/stride⌉².
func (g window) slots() int { s := (g.k + g.stride - 1) / g.stride; return s * s }

// identity reports whether the window is a plain 1×1, stride-1, unpadded view.
func (g window) identity() bool { return g.k == 1 && g.stride == 1 && g.pad == 0 }

// gatherIndices returns, for every (sample, out row, out col, kernel row, kernel col), the
// pixel row of the image (in [0, b·h·w)) or b·h·w (the padding row) when the position
// falls in the padding: [b·oh·ow·k·k, 1] int32.
func (g window) gatherIndices(b int) *tensors.Tensor {
	oh, ow := g.outH(), g.outW()
	pad := int32(b * g.h * g.w)
	idx := make([]int32, 0, b*oh*ow*g.k*g.k)
	for s := range b {
		for r := range oh {
			for c := range ow {
				for i := range g.k {
					y := r*g.stride - g.pad + i
					for j := range g.k {
						x := c*g.stride - g.pad + j
						if y < 0 || y >= g.h || x < 0 || x >= g.w {
							idx = append(idx, pad)
						} else {
							idx = append(idx, int32((s*g.h+y)*g.w+x))
						}
					}
				}
			}
		}
	}
	return tensors.FromFlatDataAndDimensions(idx, len(idx), 1)
}

// scatterIndices is the adjoint of gatherIndices: for every pixel (sample, y, x) and each of
// slots() places, the row of the gathered windows ([b·oh·ow·k·k] rows, plus one zero row
// at the end) that copied that pixel, or the zero row: [b·h·w·slots, 1] int32. A pixel's
// windows are listed in kernel-row, kernel-column order.
func (g window) scatterIndices(b int) *tensors.Tensor {
	oh, ow, kk, slots := g.outH(), g.outW(), g.k*g.k, g.slots()
	zero := int32(b * oh * ow * kk)
	idx := make([]int32, 0, b*g.h*g.w*slots)
	for s := range b {
		for y := range g.h {
			for x := range g.w {
				n := 0
				for i := range g.k {
					ry := y + g.pad - i
					if ry < 0 || ry%g.stride != 0 || ry/g.stride >= oh {
						continue
					}
					for j := range g.k {
						rx := x + g.pad - j
						if rx < 0 || rx%g.stride != 0 || rx/g.stride >= ow {
							continue
						}
						idx = append(idx, int32(((s*oh+ry/g.stride)*ow+rx/g.stride)*kk+i*g.k+j))
						n++
					}
				}
				for ; n < slots; n++ {
					idx = append(idx, zero)
				}
			}
		}
	}
	return tensors.FromFlatDataAndDimensions(idx, len(idx), 1)
}

// gatherWindows returns the windows of x [b, h, w, c] as [b·oh·ow·k·k, c] rows; positions in
// the padding take padValue.
func (g window) gatherWindows(x *Node, padValue float64) *Node {
	dims := x.Shape().Dimensions
	b, c := dims[0], dims[3]
	rows := Reshape(x, b*g.h*g.w, c)
	if g.identity() {
		return rows
	}
	if g.pad > 0 {
		padRow := BroadcastToDims(Scalar(x.Graph(), x.DType(), padValue), 1, c)
		rows = Concatenate([]*Node{rows, padRow}, 0)
	}
	return Gather(rows, Const(x.Graph(), g.gatherIndices(b)))
}

// scatterWindows is the adjoint of gatherWindows: given d [b·oh·ow·k·k, c] (a value per
// gathered position) it returns [b, h, w, c], each pixel the sum over the positions that
// copied it (padding positions are dropped).
func (g window) scatterWindows(d *Node, b int) *Node {
	c := d.Shape().Dimensions[1]
	if g.identity() {
		return Reshape(d, b, g.h, g.w, c)
	}
	parts := Gather(withZeroRow(d), Const(d.Graph(), g.scatterIndices(b)))
	if g.slots() == 1 {
		return Reshape(parts, b, g.h, g.w, c)
	}
	return ReduceSum(Reshape(parts, b, g.h, g.w, g.slots(), c), 3)
}

// conv is a 2-D convolution of x [b, h, w, cin] with weight [k, k, cin, cout] (HWIO) and an
// optional bias [cout] (nil: none), with PyTorch's stride and zero padding.
func (t *tape) conv(x, weight, bias *tv, k, stride, pad int) *tv {
	dims := x.n.Shape().Dimensions
	b, h, w, cin := dims[0], dims[1], dims[2], dims[3]
	cout := weight.n.Shape().Dimensions[3]
	g := window{h: h, w: w, k: k, stride: stride, pad: pad}
	oh, ow := g.outH(), g.outW()
	if t.macs != nil {
		t.macs[weight] += int64(b) * int64(oh*ow) * int64(k*k*cin) * int64(cout)
	}
	cols := Reshape(g.gatherWindows(x.n, 0), b*oh*ow, k*k*cin)
	wm := Reshape(weight.n, k*k*cin, cout)
	z := DotGeneral(cols, []int{1}, nil, wm, []int{0}, nil)
	inputs := []*tv{x, weight}
	if bias != nil {
		z = Add(z, Reshape(bias.n, 1, cout))
		inputs = append(inputs, bias)
	}
	return t.out(Reshape(z, b, oh, ow, cout), func(o *tv) {
		dz := Reshape(o.g, b*oh*ow, cout)
		weight.addGrad(Reshape(DotGeneral(cols, []int{0}, nil, dz, []int{0}, nil), k, k, cin, cout))
		if bias != nil {
			bias.addGrad(ReduceSum(dz, 0))
		}
		if x.needGrad {
			dCols := DotGeneral(dz, []int{1}, nil, wm, []int{1}, nil)
			x.addGrad(g.scatterWindows(Reshape(dCols, b*oh*ow*k*k, cin), b))
		}
	}, inputs...)
}

// maxPool is PyTorch's MaxPool2d(k, stride, padding) on x [b, h, w, c]: padding never wins
// (it is −∞), and the gradient goes to the first maximal element of each window (kernel
// row, then column order; ties are measure-zero for real inputs).
func (t *tape) maxPool(x *tv, k, stride, pad int) *tv {
	dims := x.n.Shape().Dimensions
	b, h, w, c := dims[0], dims[1], dims[2], dims[3]
	g := window{h: h, w: w, k: k, stride: stride, pad: pad}
	oh, ow, kk := g.outH(), g.outW(), k*k
	p := b * oh * ow
	win := Reshape(g.gatherWindows(x.n, math.Inf(-1)), p, kk, c)
	return t.out(Reshape(ReduceMax(win, 1), b, oh, ow, c), func(o *tv) {
		arg := ArgMax(win, 1, dtypes.Int32)
		slot := Iota(x.n.Graph(), shapes.Make(dtypes.Int32, p, kk, c), 1)
		first := Equal(slot, BroadcastToDims(Reshape(arg, p, 1, c), p, kk, c))
		dy := BroadcastToDims(Reshape(o.g, p, 1, c), p, kk, c)
		d := Where(first, dy, ZerosLike(dy))
		x.addGrad(g.scatterWindows(Reshape(d, p*kk, c), b))
	}, x)
}

// relu is max(x, 0); its gradient flows where the output is positive.
func (t *tape) relu(x *tv) *tv {
	zero := ScalarZero(x.n.Graph(), x.n.DType())
	y := Max(x.n, zero)
	return t.out(y, func(o *tv) {
		x.addGrad(Where(GreaterThan(y, zero), o.g, ZerosLike(o.g)))
	}, x)
}

// add is a + b (same shapes).
func (t *tape) add(a, b *tv) *tv {
	return t.out(Add(a.n, b.n), func(o *tv) {
		a.addGrad(o.g)
		b.addGrad(o.g)
	}, a, b)
}

// reshape views x with new dimensions.
func (t *tape) reshape(x *tv, dims ...int) *tv {
	old := x.n.Shape().Dimensions
	return t.out(Reshape(x.n, dims...), func(o *tv) {
		x.addGrad(Reshape(o.g, old...))
	}, x)
}

// globalAvgPool averages x [b, h, w, c] over its spatial axes: [b, c].
func (t *tape) globalAvgPool(x *tv) *tv {
	dims := x.n.Shape().Dimensions
	b, h, w, c := dims[0], dims[1], dims[2], dims[3]
	scale := Scalar(x.n.Graph(), x.n.DType(), 1/float64(h*w))
	return t.out(Mul(ReduceSum(Reshape(x.n, b, h*w, c), 1), scale), func(o *tv) {
		x.addGrad(BroadcastToDims(Reshape(Mul(o.g, scale), b, 1, 1, c), b, h, w, c))
	}, x)
}

// dense is x [b, in] · weight [in, out] + bias [out].
func (t *tape) dense(x, weight, bias *tv) *tv {
	out := weight.n.Shape().Dimensions[1]
	if t.macs != nil {
		t.macs[weight] += int64(x.n.Shape().Dimensions[0]) * int64(weight.n.Shape().Dimensions[0]) * int64(out)
	}
	z := Add(DotGeneral(x.n, []int{1}, nil, weight.n, []int{0}, nil), Reshape(bias.n, 1, out))
	return t.out(z, func(o *tv) {
		weight.addGrad(DotGeneral(x.n, []int{0}, nil, o.g, []int{0}, nil))
		bias.addGrad(ReduceSum(o.g, 0))
		if x.needGrad {
			x.addGrad(DotGeneral(o.g, []int{1}, nil, weight.n, []int{1}, nil))
		}
	}, x, weight, bias)
}

// BatchNorm constants, PyTorch's defaults for BatchNorm2d.
const (
	bnEps      = 1e-5
	bnMomentum = 0.1
)

// batchNorm is PyTorch's BatchNorm2d on x [b, h, w, c] (any leading axes; c last) with
// scale gamma and shift beta [c].
//
// Training (t.record): normalizes with the batch mean and the biased batch variance over
// the n = b·h·w values of each channel, and returns the updated running statistics
// (1 − 0.1)·running + 0.1·batch, using the unbiased variance (·n/(n−1); with n = 1 the
// biased one, where PyTorch refuses to train). Evaluation: normalizes with the running
// statistics, which are returned unchanged. With t.frozenBN a training pass normalizes as
// evaluation does, y = γ·(x − μ_run)/√(σ²_run + ε) + β, returns the running statistics
// unchanged, and back-propagates through that affine map: dβ = Σdy, dγ = Σdy·x̂,
// dx = dy·γ/√(σ²_run + ε).
func (t *tape) batchNorm(x, gamma, beta *tv, runMean, runVar *Node) (y *tv, newMean, newVar *Node) {
	dims := x.n.Shape().Dimensions
	c := dims[len(dims)-1]
	n := 1
	for _, d := range dims[:len(dims)-1] {
		n *= d
	}
	gr, dtype := x.n.Graph(), x.n.DType()
	sc := func(v float64) *Node { return Scalar(gr, dtype, v) }
	row := func(v *Node) *Node { return Reshape(v, 1, c) }
	xr := Reshape(x.n, n, c)
	if !t.record || t.frozenBN {
		inv := Div(sc(1), Sqrt(Add(runVar, sc(bnEps))))
		xhat := Mul(Sub(xr, row(runMean)), row(inv))
		out := Add(Mul(xhat, row(gamma.n)), row(beta.n))
		if !t.record {
			return &tv{n: Reshape(out, dims...)}, runMean, runVar
		}
		y = t.out(Reshape(out, dims...), func(o *tv) {
			dy := Reshape(o.g, n, c)
			beta.addGrad(ReduceSum(dy, 0))
			gamma.addGrad(ReduceSum(Mul(dy, xhat), 0))
			if x.needGrad {
				x.addGrad(Reshape(Mul(dy, row(Mul(gamma.n, inv))), dims...))
			}
		}, x, gamma, beta)
		return y, runMean, runVar
	}
	mean := Div(ReduceSum(xr, 0), sc(float64(n)))
	xc := Sub(xr, row(mean))
	variance := Div(ReduceSum(Mul(xc, xc), 0), sc(float64(n)))
	inv := Div(sc(1), Sqrt(Add(variance, sc(bnEps))))
	xhat := Mul(xc, row(inv))
	out := Add(Mul(xhat, row(gamma.n)), row(beta.n))
	unbiased := variance
	if n > 1 {
		unbiased = Mul(variance, sc(float64(n)/float64(n-1)))
	}
	newMean = Add(Mul(sc(1-bnMomentum), runMean), Mul(sc(bnMomentum), mean))
	newVar = Add(Mul(sc(1-bnMomentum), runVar), Mul(sc(bnMomentum), unbiased))
	y = t.out(Reshape(out, dims...), func(o *tv) {
		dy := Reshape(o.g, n, c)
		beta.addGrad(ReduceSum(dy, 0))
		gamma.addGrad(ReduceSum(Mul(dy, xhat), 0))
		if x.needGrad {
			// dx = inv/n · (n·dx̂ − Σdx̂ − x̂·Σ(dx̂·x̂)), dx̂ = dy·γ.
			dxhat := Mul(dy, row(gamma.n))
			s1 := row(ReduceSum(dxhat, 0))
			s2 := row(ReduceSum(Mul(dxhat, xhat), 0))
			dx := Mul(Sub(Sub(Mul(dxhat, sc(float64(n))), s1), Mul(xhat, s2)), row(Div(inv, sc(float64(n)))))
			x.addGrad(Reshape(dx, dims...))
		}
	}, x, gamma, beta)
	return y, newMean, newVar
}
