package fastcpu

import (
	"math"
	"slices"
	"unsafe"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// This file replaces simplego's single-threaded Where, Max, GreaterThan, Equal, LogicalAnd,
// LogicalOr, LogicalNot, ReduceSum and ReduceMax for the float32 (and bool) operands of the
// shapes fedpipe's graphs use. Elementwise ops compute each output element exactly as
// simplego does, split into contiguous ranges between goroutines. Reductions keep simplego's
// order: every output element accumulates its inputs one at a time in increasing index
// order starting from simplego's initial value, and work is split between output elements
// only, so the results are simplego's bit for bit whatever the number of workers.

// outputOf returns the output buffer of an elementwise op: an owned input of the output's
// shape (removed from inputs, as simplego does; the last such input wins, like simplego's
// binary ops), else a new buffer.
func outputOf(engine *simplego.Backend, inputs []*simplego.Buffer, inputsOwned []bool,
	shape shapes.Shape) *simplego.Buffer {
	for i := len(inputs) - 1; i >= 0; i-- {
		if !inputsOwned[i] || inputs[i] == nil {
			continue
		}
		if s, err := engine.BufferShape(inputs[i]); err == nil && s.Equal(shape) {
			buf := inputs[i]
			inputs[i] = nil
			return buf
		}
	}
	return engine.NewBuffer(shape)
}

// dataOf returns a buffer's storage as []T (nil if it holds another type).
func dataOf[T any](engine *simplego.Backend, buf *simplego.Buffer) []T {
	flat, err := engine.BufferData(buf)
	if err != nil {
		return nil
	}
	f, _ := flat.([]T)
	return f
}

// elementwise runs fn over [0, n) split between up to threads goroutines (≤ 0: GOMAXPROCS).
func elementwise(threads, n int, fn func(lo, hi int)) { parallelFor(threads, n, n, fn) }

// execWhere replaces simplego's Where for float32 values on fpfast backends (condition and
// values each either full-size or scalar).
func execWhere(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
	inputsOwned []bool) (*simplego.Buffer, error) {
	outShape := nodeShape(node)
	if lookup(engine) == nil || outShape.DType != dtypes.Float32 {
		return simplegoWhere(engine, node, inputs, inputsOwned)
	}
	n := outShape.Size()
	cond := dataOf[bool](engine, inputs[0])
	onTrue, onFalse := float32Data(engine, inputs[1]), float32Data(engine, inputs[2])
	okLen := func(l int) bool { return l == n || l == 1 }
	if cond == nil || onTrue == nil || onFalse == nil || !okLen(len(cond)) || !okLen(len(onTrue)) ||
		!okLen(len(onFalse)) || len(cond) != n {
		return simplegoWhere(engine, node, inputs, inputsOwned)
	}
	// simplego reuses an owned onTrue first, then onFalse.
	var out *simplego.Buffer
	switch {
	case inputsOwned[1] && len(onTrue) == n && sameShape(engine, inputs[1], outShape):
		out, inputs[1] = inputs[1], nil
	case inputsOwned[2] && len(onFalse) == n && sameShape(engine, inputs[2], outShape):
		out, inputs[2] = inputs[2], nil
	default:
		out = engine.NewBuffer(outShape)
	}
	if out == nil {
		return simplegoWhere(engine, node, inputs, inputsOwned)
	}
	dst := float32Data(engine, out)
	elementwise(threadsOf(engine), n, func(lo, hi int) { selectFloat32(dst, cond, onTrue, onFalse, lo, hi) })
	return out, nil
}

// selectFloat32 sets dst[i] = onTrue[i] where cond[i], else onFalse[i], for i in [lo, hi);
// a value slice of length 1 is a scalar. It selects bits with a mask instead of branching:
// ReLU and max-pool masks are close to random, and a branch per element mispredicted about
// half the time (5× slower on 692k random conditions); where select_amd64.s runs it does
// 8 values at a time (selectVec) and the loops below do the rest. The bits stored are the
// selected value's, exactly.
func selectFloat32(dst []float32, cond []bool, onTrue, onFalse []float32, lo, hi int) {
	lo += selectVec(dst[lo:hi], cond[lo:hi], part(onTrue, lo, hi), part(onFalse, lo, hi))
	c := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(cond))), len(cond))[lo:hi]
	d := dst[lo:hi]
	bits := func(v float32) uint32 { return math.Float32bits(v) }
	switch {
	case len(onTrue) != 1 && len(onFalse) != 1:
		t, f := onTrue[lo:hi], onFalse[lo:hi]
		for i := range d {
			m := -uint32(c[i] & 1)
			d[i] = math.Float32frombits(bits(t[i])&m | bits(f[i])&^m)
		}
	case len(onTrue) != 1:
		t, f := onTrue[lo:hi], bits(onFalse[0])
		for i := range d {
			m := -uint32(c[i] & 1)
			d[i] = math.Float32frombits(bits(t[i])&m | f&^m)
		}
	case len(onFalse) != 1:
		t, f := bits(onTrue[0]), onFalse[lo:hi]
		for i := range d {
			m := -uint32(c[i] & 1)
			d[i] = math.Float32frombits(t&m | bits(f[i])&^m)
		}
	default:
		t, f := bits(onTrue[0]), bits(onFalse[0])
		for i := range d {
			m := -uint32(c[i] & 1)
			d[i] = math.Float32frombits(t&m | f&^m)
		}
	}
}

// part returns v's values in [lo, hi), or v itself when it holds one value (a scalar).
func part(v []float32, lo, hi int) []float32 {
	if len(v) == 1 {
		return v
	}
	return v[lo:hi]
}

// sameShape reports whether buf has the given shape.
func sameShape(engine *simplego.Backend, buf *simplego.Buffer, shape shapes.Shape) bool {
	s, err := engine.BufferShape(buf)
	return err == nil && s.Equal(shape)
}

// binaryOperands returns the float32 data of a binary op's operands if both are float32 and
// each is either full-size (n elements) with the output's dimensions or a single element.
func binaryOperands(engine *simplego.Backend, inputs []*simplego.Buffer, out shapes.Shape) (x, y []float32, ok bool) {
	x, y = float32Data(engine, inputs[0]), float32Data(engine, inputs[1])
	if x == nil || y == nil {
		return nil, nil, false
	}
	n := out.Size()
	full := func(buf *simplego.Buffer, l int) bool {
		if l == 1 {
			return true
		}
		s, err := engine.BufferShape(buf)
		return err == nil && l == n && slices.Equal(s.Dimensions, out.Dimensions)
	}
	if !full(inputs[0], len(x)) || !full(inputs[1], len(y)) {
		return nil, nil, false
	}
	return x, y, true
}

// execMax replaces simplego's Max for float32 on fpfast backends, computing max(x, c) with
// Go's max exactly as simplego does (a one-element operand is moved to the right).
func execMax(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
	inputsOwned []bool) (*simplego.Buffer, error) {
	outShape := nodeShape(node)
	if lookup(engine) == nil || outShape.DType != dtypes.Float32 {
		return simplegoMax(engine, node, inputs, inputsOwned)
	}
	x, y, ok := binaryOperands(engine, inputs, outShape)
	n := outShape.Size()
	if !ok || n <= 1 {
		return simplegoMax(engine, node, inputs, inputsOwned)
	}
	if len(x) == 1 {
		x, y = y, x
	}
	out := outputOf(engine, inputs, inputsOwned, outShape)
	if out == nil {
		return simplegoMax(engine, node, inputs, inputsOwned)
	}
	dst := float32Data(engine, out)
	elementwise(threadsOf(engine), n, func(lo, hi int) {
		if len(y) == 1 {
			c := y[0]
			for i := lo + maxVec(dst[lo:hi], x[lo:hi], nil, c); i < hi; i++ {
				dst[i] = max(x[i], c)
			}
			return
		}
		for i := lo + maxVec(dst[lo:hi], x[lo:hi], y[lo:hi], 0); i < hi; i++ {
			dst[i] = max(x[i], y[i])
		}
	})
	return out, nil
}

// compareExec returns the replacement of simplego's GreaterThan (greater) or Equal for
// float32 operands on fpfast backends.
func compareExec(greater bool, original *executor) executor {
	return func(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
		inputsOwned []bool) (*simplego.Buffer, error) {
		outShape := nodeShape(node)
		if lookup(engine) == nil || outShape.DType != dtypes.Bool {
			return (*original)(engine, node, inputs, inputsOwned)
		}
		x, y, ok := binaryOperands(engine, inputs, outShape)
		n := outShape.Size()
		if !ok || n <= 1 {
			return (*original)(engine, node, inputs, inputsOwned)
		}
		out := engine.NewBuffer(outShape)
		if out == nil {
			return (*original)(engine, node, inputs, inputsOwned)
		}
		dst := dataOf[bool](engine, out)
		elementwise(threadsOf(engine), n, func(lo, hi int) {
			lo += compareVec(greater, dst[lo:hi], part(x, lo, hi), part(y, lo, hi))
			switch {
			case len(y) == 1 && greater:
				c := y[0]
				for i := lo; i < hi; i++ {
					dst[i] = x[i] > c
				}
			case len(y) == 1:
				c := y[0]
				for i := lo; i < hi; i++ {
					dst[i] = x[i] == c
				}
			case len(x) == 1 && greater:
				c := x[0]
				for i := lo; i < hi; i++ {
					dst[i] = c > y[i]
				}
			case len(x) == 1:
				c := x[0]
				for i := lo; i < hi; i++ {
					dst[i] = c == y[i]
				}
			case greater:
				for i := lo; i < hi; i++ {
					dst[i] = x[i] > y[i]
				}
			default:
				for i := lo; i < hi; i++ {
					dst[i] = x[i] == y[i]
				}
			}
		})
		return out, nil
	}
}

// logicalExec returns the replacement of simplego's LogicalAnd (and), LogicalOr (!and) for
// bool operands of equal shapes on fpfast backends.
func logicalExec(and bool, original *executor) executor {
	return func(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
		inputsOwned []bool) (*simplego.Buffer, error) {
		outShape := nodeShape(node)
		if lookup(engine) == nil || outShape.DType != dtypes.Bool {
			return (*original)(engine, node, inputs, inputsOwned)
		}
		x, y := dataOf[bool](engine, inputs[0]), dataOf[bool](engine, inputs[1])
		n := outShape.Size()
		if len(x) != n || len(y) != n || n <= 1 || !sameShape(engine, inputs[0], outShape) ||
			!sameShape(engine, inputs[1], outShape) {
			return (*original)(engine, node, inputs, inputsOwned)
		}
		out := outputOf(engine, inputs, inputsOwned, outShape)
		if out == nil {
			return (*original)(engine, node, inputs, inputsOwned)
		}
		dst := dataOf[bool](engine, out)
		elementwise(threadsOf(engine), n, func(lo, hi int) {
			if and {
				for i := lo; i < hi; i++ {
					dst[i] = x[i] && y[i]
				}
			} else {
				for i := lo; i < hi; i++ {
					dst[i] = x[i] || y[i]
				}
			}
		})
		return out, nil
	}
}

// execLogicalNot replaces simplego's LogicalNot on fpfast backends.
func execLogicalNot(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
	inputsOwned []bool) (*simplego.Buffer, error) {
	outShape := nodeShape(node)
	x := dataOf[bool](engine, inputs[0])
	if lookup(engine) == nil || outShape.DType != dtypes.Bool || x == nil || len(x) != outShape.Size() {
		return simplegoLogicalNot(engine, node, inputs, inputsOwned)
	}
	var out *simplego.Buffer
	if inputsOwned[0] {
		out, inputs[0] = inputs[0], nil
	} else {
		out = engine.NewBuffer(outShape)
	}
	if out == nil {
		return simplegoLogicalNot(engine, node, inputs, inputsOwned)
	}
	dst := dataOf[bool](engine, out)
	elementwise(threadsOf(engine), len(x), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst[i] = !x[i]
		}
	})
	return out, nil
}

// reduceExec returns the replacement of simplego's ReduceSum (isMax false) or ReduceMax for
// float32 operands on fpfast backends whose reduced axes are contiguous.
func reduceExec(op backends.OpType, original *executor) executor {
	isMax := op == backends.OpTypeReduceMax
	return func(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
		inputsOwned []bool) (*simplego.Buffer, error) {
		outShape := nodeShape(node)
		src := float32Data(engine, inputs[0])
		if lookup(engine) == nil || outShape.DType != dtypes.Float32 || src == nil {
			return (*original)(engine, node, inputs, inputsOwned)
		}
		axes, ok := nodeData(node).Interface().([]int)
		inShape, err := engine.BufferShape(inputs[0])
		if !ok || err != nil || len(axes) == 0 {
			return (*original)(engine, node, inputs, inputsOwned)
		}
		outer, red, inner, ok := reduceLayout(inShape.Dimensions, axes)
		if !ok || outer*inner != outShape.Size() {
			return (*original)(engine, node, inputs, inputsOwned)
		}
		out := engine.NewBuffer(outShape)
		if out == nil {
			return (*original)(engine, node, inputs, inputsOwned)
		}
		reduceFloat32(threadsOf(engine), float32Data(engine, out), src, outer, red, inner, isMax)
		return out, nil
	}
}

// reduceLayout views dims as [outer, red, inner] with the reduced axes (which must be
// contiguous) in the middle.
func reduceLayout(dims, axes []int) (outer, red, inner int, ok bool) {
	sorted := slices.Clone(axes)
	slices.Sort(sorted)
	for i := 1; i < len(sorted); i++ {
		if sorted[i] != sorted[i-1]+1 {
			return 0, 0, 0, false
		}
	}
	first, last := sorted[0], sorted[len(sorted)-1]
	if first < 0 || last >= len(dims) {
		return 0, 0, 0, false
	}
	outer, red, inner = 1, 1, 1
	for i, d := range dims {
		switch {
		case i < first:
			outer *= d
		case i <= last:
			red *= d
		default:
			inner *= d
		}
	}
	return outer, red, inner, true
}

// reduceFloat32 computes dst[o·inner+i] = reduction over r of src[(o·red+r)·inner+i], each
// output starting at simplego's initial value (0, or -Inf for max) and taking its inputs in
// increasing r. Work is split between output elements (over o, or over i when outer is 1),
// so the order of every output's operations is fixed.
func reduceFloat32(threads int, dst, src []float32, outer, red, inner int, isMax bool) {
	init := float32(0)
	if isMax {
		init = dtypes.Float32.LowestValue().(float32)
	}
	run := func(oLo, oHi, iLo, iHi int) {
		for o := oLo; o < oHi; o++ {
			d := dst[o*inner+iLo : o*inner+iHi]
			for i := range d {
				d[i] = init
			}
			base := o * red * inner
			if !isMax && len(d) >= 8 && red > 0 {
				sumRows(d, src[base+iLo:], red, inner)
				continue
			}
			for r := range red {
				s := src[base+r*inner+iLo : base+r*inner+iHi]
				if isMax {
					for i, v := range s {
						d[i] = max(d[i], v)
					}
				} else {
					for i, v := range s {
						d[i] += v
					}
				}
			}
		}
	}
	total := outer * red * inner
	if outer == 1 {
		parallelFor(threads, inner, total, func(lo, hi int) { run(0, 1, lo, hi) })
		return
	}
	parallelFor(threads, outer, total, func(lo, hi int) { run(lo, hi, 0, inner) })
}
