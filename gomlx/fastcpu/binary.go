package fastcpu

import (
	"slices"
	"sync"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// binaryOp is a float32 elementwise operation.
type binaryOp int

const (
	opAdd binaryOp = iota
	opSub
	opMul
)

// vecMode says which operands of binaryVec are vectors.
type vecMode int

const (
	vecVec    vecMode = iota // x op y
	vecScalar                // x op v
	scalarVec                // v op x
)

// apply computes dst[i] = x[i] op y[i], with y broadcast when it has one element.
func (op binaryOp) apply(dst, x, y []float32) {
	if len(y) == 1 {
		v := y[0]
		k := op.binaryVec(dst, x, nil, v, vecScalar)
		dst, x = dst[k:], x[k:]
		switch op {
		case opAdd:
			for i := range dst {
				dst[i] = x[i] + v
			}
		case opSub:
			for i := range dst {
				dst[i] = x[i] - v
			}
		case opMul:
			for i := range dst {
				dst[i] = x[i] * v
			}
		}
		return
	}
	k := op.binaryVec(dst, x, y, 0, vecVec)
	dst, x, y = dst[k:], x[k:], y[k:]
	y = y[:len(dst)]
	x = x[:len(dst)]
	switch op {
	case opAdd:
		for i := range dst {
			dst[i] = x[i] + y[i]
		}
	case opSub:
		for i := range dst {
			dst[i] = x[i] - y[i]
		}
	case opMul:
		for i := range dst {
			dst[i] = x[i] * y[i]
		}
	}
}

// applyScalarLeft computes dst[i] = v op y[i].
func (op binaryOp) applyScalarLeft(dst []float32, v float32, y []float32) {
	k := op.binaryVec(dst, y, nil, v, scalarVec)
	dst, y = dst[k:], y[k:]
	y = y[:len(dst)]
	switch op {
	case opAdd:
		for i := range dst {
			dst[i] = v + y[i]
		}
	case opSub:
		for i := range dst {
			dst[i] = v - y[i]
		}
	case opMul:
		for i := range dst {
			dst[i] = v * y[i]
		}
	}
}

// accumulate adds s to d element by element, d[j] = s[j] + d[j] (the operand order Go
// compiles d[j] += s[j] to), on the assembly loop where there is one: the sums that
// ScatterSum and ReduceSum build one term at a time.
func accumulate(d, s []float32) {
	s = s[:len(d)]
	k := opAdd.binaryVec(d, s, d, 0, vecVec)
	d, s = d[k:], s[k:]
	for j, v := range s {
		d[j] = v + d[j]
	}
}

// sumRows adds rows rows of len(d) values, stride elements apart in s, into d in row
// order, each sum d[j] = s[r·stride+j] + d[j] as accumulate's: the assembly loop keeps
// column blocks in registers across the rows, Go adds the columns past its multiple of 8.
func sumRows(d, s []float32, rows, stride int) {
	k := sumRowsVec(d, s, rows, stride)
	if k == len(d) {
		return
	}
	for r := range rows {
		accumulate(d[k:], s[r*stride+k:r*stride+len(d)])
	}
}

// repeatTile is the most values repeated returns: a vector loop's call then covers up to
// this many values of a short repeating row (a bias of 32 channels: 16 rows per call).
const repeatTile = 512

// repeatPool holds the buffers of repeated.
var repeatPool = sync.Pool{New: func() any { return new([repeatTile]float32) }}

// repeated returns y (a row that repeats along an output of n values) repeated as many
// whole times as fit in repeatTile values and n, with the pooled buffer that holds it (for
// repeatPool.Put; nil when none): y itself where it is already that long, or where its
// length is not a multiple of 8. Row by
// row, apply's assembly loop does such a row's first multiple of 8 values and Go the rest;
// repeated rows would move some of those values to the assembly loop, and the two do not
// agree on every NaN payload (Go's x + y returns y's NaN when both are NaNs, VADDPS x's), so
// only rows the assembly loop covers whole are repeated.
func repeated(y []float32, n int) ([]float32, *[repeatTile]float32) {
	reps := min(repeatTile/len(y), n/len(y))
	if reps <= 1 || len(y)%8 != 0 {
		return y, nil
	}
	buf := repeatPool.Get().(*[repeatTile]float32)
	yt := buf[:reps*len(y)]
	for o := 0; o < len(yt); o += len(y) {
		copy(yt[o:], y)
	}
	return yt, buf
}

// applyRepeated computes dst[i] = x[i] op y[i mod len(y)] for i in [lo, hi), where lo and
// hi are multiples of the row length b and yt holds whole rows (see repeated): each call of
// apply covers up to len(yt) values instead of one row, with the same operation on every
// element (apply's assembly and Go loops give the same bits).
func (op binaryOp) applyRepeated(dst, x, yt []float32, lo, hi int) {
	for o := lo; o < hi; {
		m := min(len(yt), hi-o)
		op.apply(dst[o:o+m], x[o:o+m], yt[:m])
		o += m
	}
}

// trailingBroadcast reports whether small (same rank as out) is 1 on a prefix of axes and
// equal to out on the rest, returning the number of elements of that trailing block.
func trailingBroadcast(small, out []int) (int, bool) {
	i := 0
	for i < len(out) && small[i] == 1 {
		i++
	}
	if !slices.Equal(small[i:], out[i:]) {
		return 0, false
	}
	n := 1
	for _, d := range out[i:] {
		n *= d
	}
	return n, true
}

// binaryExec returns the executor replacing simplego's for op: float32 operands on fpfast
// backends with equal shapes, a one-element operand, or an operand broadcast along leading
// axes (a bias) are computed directly; the rest goes to simplego's implementation. As in
// simplego, an owned input with the output's shape is reused as the output.
func binaryExec(op binaryOp, original *executor) executor {
	return func(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
		inputsOwned []bool) (*simplego.Buffer, error) {
		if lookup(engine) == nil {
			return (*original)(engine, node, inputs, inputsOwned)
		}
		outShape := nodeShape(node)
		if outShape.DType == dtypes.Int32 {
			if out := int32Binary(engine, op, inputs, inputsOwned, outShape); out != nil {
				return out, nil
			}
		}
		if outShape.DType != dtypes.Float32 {
			return (*original)(engine, node, inputs, inputsOwned)
		}
		ls, err := engine.BufferShape(inputs[0])
		if err != nil {
			return nil, err
		}
		rs, err := engine.BufferShape(inputs[1])
		if err != nil {
			return nil, err
		}
		x, y := float32Data(engine, inputs[0]), float32Data(engine, inputs[1])
		n := outShape.Size()
		var block int // Elements of the broadcast block; 0: not a supported pattern.
		switch {
		case len(x) == n && (len(y) == n || len(y) == 1), len(y) == n && len(x) == 1:
			block = n
		case len(x) == n && ls.Rank() == rs.Rank():
			block, _ = trailingBroadcast(rs.Dimensions, outShape.Dimensions)
		case len(y) == n && ls.Rank() == rs.Rank():
			block, _ = trailingBroadcast(ls.Dimensions, outShape.Dimensions)
		}
		if block == 0 || n == 0 {
			return (*original)(engine, node, inputs, inputsOwned)
		}
		out, dst := outputFor(engine, inputs, inputsOwned, outShape)
		if out == nil {
			return (*original)(engine, node, inputs, inputsOwned)
		}
		switch {
		case len(x) == 1 && len(y) != 1:
			elementwise(threadsOf(engine), n, func(lo, hi int) { op.applyScalarLeft(dst[lo:hi], x[0], y[lo:hi]) })
		case len(y) == 1:
			elementwise(threadsOf(engine), n, func(lo, hi int) { op.apply(dst[lo:hi], x[lo:hi], y) })
		case block == n:
			elementwise(threadsOf(engine), n, func(lo, hi int) { op.apply(dst[lo:hi], x[lo:hi], y[lo:hi]) })
		case len(x) == n: // y repeats every block elements (a bias).
			yt, buf := repeated(y, n)
			parallelFor(threadsOf(engine), n/block, n, func(lo, hi int) {
				op.applyRepeated(dst, x, yt, lo*block, hi*block)
			})
			if buf != nil {
				repeatPool.Put(buf)
			}
		default: // x repeats.
			parallelFor(threadsOf(engine), n/block, n, func(lo, hi int) {
				for o := lo * block; o < hi*block; o += block {
					d := dst[o : o+block]
					switch op {
					case opAdd:
						opAdd.apply(d, y[o:o+block], x) // Commutative.
					case opMul:
						opMul.apply(d, y[o:o+block], x)
					case opSub:
						yy := y[o : o+block]
						for i := range d {
							d[i] = x[i] - yy[i]
						}
					}
				}
			})
		}
		return out, nil
	}
}

// int32Binary computes an int32 Add, Sub or Mul whose operands have the output's size or
// one element (max-pooling's flat indices, arg·cout + base), with Go's wrapping int32
// arithmetic as simplego's generic loops: the same integers. It returns nil, having
// changed nothing, for any other pattern (left to simplego).
func int32Binary(engine *simplego.Backend, op binaryOp, inputs []*simplego.Buffer, inputsOwned []bool,
	outShape shapes.Shape) *simplego.Buffer {
	x, y := dataOf[int32](engine, inputs[0]), dataOf[int32](engine, inputs[1])
	n := outShape.Size()
	if x == nil || y == nil || n == 0 || (len(x) != n && len(x) != 1) || (len(y) != n && len(y) != 1) {
		return nil
	}
	out := outputOf(engine, inputs, inputsOwned, outShape)
	if out == nil {
		return nil
	}
	dst := dataOf[int32](engine, out)
	elementwise(threadsOf(engine), n, func(lo, hi int) { op.applyInt32(dst[lo:hi], x, y, lo) })
	return out
}

// applyInt32 computes dst[i] = x[lo+i] op y[lo+i] for int32 operands, either of which may
// have one element (broadcast): the assembly loop does the first multiple of 8 where it
// runs, Go's wrapping arithmetic the rest.
func (op binaryOp) applyInt32(dst, x, y []int32, lo int) {
	f := op.int32Func()
	at := func(v []int32) []int32 {
		if len(v) == 1 {
			return nil
		}
		return v[lo : lo+len(dst)]
	}
	xs, ys := at(x), at(y)
	switch {
	case xs != nil && ys != nil:
		k := op.int32Vec(dst, xs, ys, 0)
		for i := k; i < len(dst); i++ {
			dst[i] = f(xs[i], ys[i])
		}
	case xs != nil:
		k := op.int32Vec(dst, xs, nil, y[0])
		for i := k; i < len(dst); i++ {
			dst[i] = f(xs[i], y[0])
		}
	case ys != nil:
		k := 0
		if op != opSub { // v + y and v · y are y + v and y · v: the same integers.
			k = op.int32Vec(dst, ys, nil, x[0])
		}
		for i := k; i < len(dst); i++ {
			dst[i] = f(x[0], ys[i])
		}
	default: // Both one element: n is 1 too.
		for i := range dst {
			dst[i] = f(x[0], y[0])
		}
	}
}

// int32Func is op on two int32 values, with Go's wrapping arithmetic.
func (op binaryOp) int32Func() func(a, b int32) int32 {
	switch op {
	case opSub:
		return func(a, b int32) int32 { return a - b }
	case opMul:
		return func(a, b int32) int32 { return a * b }
	}
	return func(a, b int32) int32 { return a + b }
}

// outputFor returns the output buffer of an elementwise op: an owned input of the output's
// shape (removed from inputs, as simplego does), else a new buffer.
func outputFor(engine *simplego.Backend, inputs []*simplego.Buffer, inputsOwned []bool,
	shape shapes.Shape) (*simplego.Buffer, []float32) {
	for i := len(inputs) - 1; i >= 0; i-- {
		if !inputsOwned[i] {
			continue
		}
		if s, err := engine.BufferShape(inputs[i]); err == nil && s.Equal(shape) {
			buf := inputs[i]
			inputs[i] = nil
			return buf, float32Data(engine, buf)
		}
	}
	buf := engine.NewBuffer(shape)
	if buf == nil {
		return nil, nil
	}
	return buf, float32Data(engine, buf)
}
