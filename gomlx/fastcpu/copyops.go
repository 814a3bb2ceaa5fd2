package fastcpu

import (
	"fmt"
	"math"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// float32Data returns the float32 storage of a buffer, or nil if it holds another dtype.
func float32Data(engine *simplego.Backend, buf *simplego.Buffer) []float32 {
	flat, err := engine.BufferData(buf)
	if err != nil {
		return nil
	}
	f, _ := flat.([]float32)
	return f
}

// execSlice replaces simplego's Slice for float32 on fpfast backends: contiguous runs are
// copied with copy() instead of element by element.
func execSlice(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
	inputsOwned []bool) (*simplego.Buffer, error) {
	src := float32Data(engine, inputs[0])
	if lookup(engine) == nil || src == nil {
		return simplegoSlice(engine, node, inputs, inputsOwned)
	}
	v, err := intSlices(nodeData(node), "starts", "limits", "strides")
	if err != nil {
		return nil, fmt.Errorf("%s Slice: %w", Name, err)
	}
	inShape, err := engine.BufferShape(inputs[0])
	if err != nil {
		return nil, err
	}
	outShape := nodeShape(node)
	out := engine.NewBuffer(outShape)
	if out == nil {
		return nil, fmt.Errorf("%s Slice: backend is finalized", Name)
	}
	sliceFloat32(threadsOf(engine), float32Data(engine, out), src, inShape.Dimensions, outShape.Dimensions, v[0], v[2])
	return out, nil
}

// sliceFloat32 copies the strided slice of src (row-major, dims inDims) starting at starts
// with strides (nil means all 1) into dst (dims outDims).
func sliceFloat32(threads int, dst, src []float32, inDims, outDims, starts, strides []int) {
	rank := len(inDims)
	if rank == 0 {
		copy(dst, src[:1])
		return
	}
	inStrides := make([]int, rank)
	acc := 1
	for i := rank - 1; i >= 0; i-- {
		inStrides[i] = acc
		acc *= inDims[i]
	}
	step := func(i int) int {
		if i < len(strides) && strides[i] > 0 {
			return strides[i]
		}
		return 1
	}
	base := 0
	for i := range rank {
		base += starts[i] * inStrides[i]
	}
	// Axes [inner, rank) are copied as runs of run elements: the innermost axis, plus the
	// axes before it as long as everything after them is taken whole with unit steps.
	inner, run, innerStep := rank-1, outDims[rank-1], step(rank-1)
	if innerStep == 1 {
		for inner > 0 && outDims[inner] == inDims[inner] && step(inner-1) == 1 {
			inner--
			run *= outDims[inner]
		}
	}
	outer := 1
	for i := range inner {
		outer *= outDims[i]
	}
	parallelFor(threads, outer, outer*run, func(lo, hi int) {
		// Position the odometer at outer index lo.
		idx := make([]int, inner)
		srcOff := base
		for ax, rem := inner-1, lo; ax >= 0; ax-- {
			idx[ax] = rem % outDims[ax]
			rem /= outDims[ax]
			srcOff += idx[ax] * step(ax) * inStrides[ax]
		}
		for o := lo; o < hi; o++ {
			d := dst[o*run : (o+1)*run]
			if innerStep == 1 {
				copy(d, src[srcOff:srcOff+run])
			} else {
				for j := range d {
					d[j] = src[srcOff+j*innerStep]
				}
			}
			for ax := inner - 1; ax >= 0; ax-- { // Odometer over the outer axes.
				idx[ax]++
				srcOff += step(ax) * inStrides[ax]
				if idx[ax] < outDims[ax] {
					break
				}
				srcOff -= idx[ax] * step(ax) * inStrides[ax]
				idx[ax] = 0
			}
		}
	})
}

// execConcatenate replaces simplego's Concatenate for float32 on fpfast backends: the output
// is written in order, with short blocks copied element by element.
func execConcatenate(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
	inputsOwned []bool) (*simplego.Buffer, error) {
	outShape := nodeShape(node)
	if lookup(engine) == nil || outShape.DType != dtypes.Float32 {
		return simplegoConcatenate(engine, node, inputs, inputsOwned)
	}
	axis, ok := nodeData(node).Interface().(int)
	if !ok {
		return nil, fmt.Errorf("%s Concatenate: node data is not the axis", Name)
	}
	srcs := make([][]float32, len(inputs))
	blocks := make([]int, len(inputs)) // Elements per outer index, per input.
	inner := 1
	for _, d := range outShape.Dimensions[axis+1:] {
		inner *= d
	}
	for i, in := range inputs {
		s, err := engine.BufferShape(in)
		if err != nil {
			return nil, err
		}
		srcs[i] = float32Data(engine, in)
		blocks[i] = s.Dimensions[axis] * inner
	}
	out := engine.NewBuffer(outShape)
	if out == nil {
		return nil, fmt.Errorf("%s Concatenate: backend is finalized", Name)
	}
	concatFloat32(threadsOf(engine), float32Data(engine, out), srcs, blocks)
	return out, nil
}

// concatFloat32 writes, for each outer index o, blocks[i] elements of each srcs[i] in turn.
// Large outputs are split over outer indices between goroutines (a pure copy: the result
// does not depend on the split).
func concatFloat32(threads int, dst []float32, srcs [][]float32, blocks []int) {
	total := 0
	for _, b := range blocks {
		total += b
	}
	if total == 0 {
		return
	}
	parallelFor(threads, len(dst)/total, len(dst), func(lo, hi int) {
		off := 0
		for i, s := range srcs {
			b := blocks[i]
			switch {
			case b == 1:
				s := s[lo:hi]
				d := dst[lo*total+off:]
				for o, v := range s {
					d[o*total] = v
				}
			case b < 64:
				for o := lo; o < hi; o++ {
					d := dst[o*total+off : o*total+off+b]
					for j, v := range s[o*b : (o+1)*b] {
						d[j] = v
					}
				}
			default:
				for o := lo; o < hi; o++ {
					copy(dst[o*total+off:o*total+off+b], s[o*b:(o+1)*b])
				}
			}
			off += b
		}
	})
}

// execBroadcastInDim replaces simplego's BroadcastInDim for float32 and int32 values on
// fpfast backends. A scalar broadcast (the zeros col2im and max-pooling's gradient scatter
// into) gives every output element the scalar's bits, a +0 by clearing the buffer (which
// writes memory once, where simplego's fill copies it from itself); any other broadcast
// (a max-pooling window's gradient and argmax repeated over the window, in the ResNet and
// FedAvg-CNN graphs) copies the operand's runs (broadcastRuns) where simplego steps an
// iterator element by element. Both only copy values: the same bits as simplego. Other
// dtypes go to simplego.
func execBroadcastInDim(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
	inputsOwned []bool) (*simplego.Buffer, error) {
	outShape := nodeShape(node)
	if lookup(engine) == nil || (outShape.DType != dtypes.Float32 && outShape.DType != dtypes.Int32) {
		return simplegoBroadcastInDim(engine, node, inputs, inputsOwned)
	}
	inShape, err := engine.BufferShape(inputs[0])
	axes, ok := nodeData(node).Interface().([]int)
	if err != nil || !ok || len(axes) != inShape.Rank() {
		return simplegoBroadcastInDim(engine, node, inputs, inputsOwned)
	}
	out := engine.NewBuffer(outShape)
	if out == nil {
		return nil, fmt.Errorf("%s BroadcastInDim: backend is finalized", Name)
	}
	strides := broadcastStrides(inShape.Dimensions, axes, outShape.Dimensions)
	if outShape.DType == dtypes.Int32 {
		broadcastRuns(dataOf[int32](engine, out), dataOf[int32](engine, inputs[0]), outShape.Dimensions, strides)
		return out, nil
	}
	if src, dst := float32Data(engine, inputs[0]), float32Data(engine, out); len(src) == 1 {
		fillFloat32(dst, src[0])
	} else {
		broadcastRuns(dst, src, outShape.Dimensions, strides)
	}
	return out, nil
}

// broadcastStrides returns, for each axis of a BroadcastInDim's output dims, the stride of
// the operand (dimensions in, its axis i going to output axis axes[i]) along it: 0 where
// the operand has no such axis or has it of size 1 (repeated), its row-major stride
// otherwise.
func broadcastStrides(in, axes, out []int) []int {
	strides := make([]int, len(out))
	stride := 1
	for i := len(in) - 1; i >= 0; i-- {
		if in[i] != 1 || out[axes[i]] == 1 {
			strides[axes[i]] = stride
		}
		stride *= in[i]
	}
	return strides
}

// broadcastRuns sets dst (row-major, dimensions dims) to src read with the per-axis strides
// (0 on a repeated axis): dst[i₀,…,iₙ] = src[Σ iₖ·strides[k]]. The trailing axes that src
// holds contiguously are copied as one run each, a trailing repeated axis filled from one
// value.
func broadcastRuns[T any](dst, src []T, dims, strides []int) {
	rank := len(dims)
	if rank == 0 {
		if len(dst) > 0 {
			dst[0] = src[0]
		}
		return
	}
	// run: the elements of the innermost axes taken at once; step: src's stride within them
	// (1: a contiguous copy; 0: one value repeated).
	run, inner := dims[rank-1], rank-1
	step := strides[rank-1]
	if step == 1 || step == 0 {
		for inner > 0 && strides[inner-1] == step*run {
			inner--
			run *= dims[inner]
		}
	}
	idx := make([]int, inner)
	off := 0
	for o := 0; o < len(dst); o += run {
		switch step {
		case 1:
			copy(dst[o:o+run], src[off:off+run])
		case 0:
			v := src[off]
			for j := range dst[o : o+run] {
				dst[o+j] = v
			}
		default:
			for j := range run {
				dst[o+j] = src[off+j*step]
			}
		}
		for a := inner - 1; a >= 0; a-- { // the odometer over the outer axes
			idx[a]++
			off += strides[a]
			if idx[a] < dims[a] {
				break
			}
			off -= strides[a] * dims[a]
			idx[a] = 0
		}
	}
}

// fillFloat32 sets every element of dst to v, bit for bit (NaN payloads and the sign of
// zero included).
func fillFloat32(dst []float32, v float32) {
	bits := math.Float32bits(v)
	if bits == 0 {
		clear(dst)
		return
	}
	u := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst))
	for i := range u {
		u[i] = bits
	}
}

// minParallelElems is the number of elements below which copy ops run on one goroutine.
const minParallelElems = 1 << 16

// parallelFor calls fn over a split of [0, n) into contiguous ranges, concurrently on up to
// threads goroutines (≤ 0: GOMAXPROCS) when elems (the work's size in elements) is large
// enough.
func parallelFor(threads, n, elems int, fn func(lo, hi int)) {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	workers := min(threads, n)
	if workers <= 1 || elems < minParallelElems {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	wg.Add(workers - 1)
	for w := 1; w < workers; w++ {
		go func() {
			defer wg.Done()
			fn(w*n/workers, (w+1)*n/workers)
		}()
	}
	fn(0, n/workers)
	wg.Wait()
}

// execGather replaces simplego's Gather on fpfast backends for the row gather that im2col
// builds: float32 operand [R, c], int32 indices [M, 1], output [M, c] with out[m] =
// operand[indices[m]] (indices clamped to [0, R) as in XLA). Other gathers go to simplego.
func execGather(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
	inputsOwned []bool) (*simplego.Buffer, error) {
	src := float32Data(engine, inputs[0])
	idx := dataOf[int32](engine, inputs[1])
	outShape := nodeShape(node)
	if lookup(engine) == nil || src == nil || idx == nil || !rowGather(engine, node, inputs) {
		return simplegoGather(engine, node, inputs, inputsOwned)
	}
	c := outShape.Dimensions[1]
	rows := len(src) / c
	out := engine.NewBuffer(outShape)
	if out == nil {
		return nil, fmt.Errorf("%s Gather: backend is finalized", Name)
	}
	dst := float32Data(engine, out)
	parallelFor(threadsOf(engine), len(idx), len(dst), func(lo, hi int) {
		switch {
		case c == 1:
			gatherValues(dst, src, idx, lo, hi)
		default:
			gatherRuns(dst, src, idx, c, rows, lo, hi)
		}
	})
	return out, nil
}

// gatherValues is execGather's copy for rows of one element: dst[m] = src[idx[m]] for m in
// [lo, hi), indices clamped to [0, len(src)). The assembly loop gathers 8 at a time where
// there is one (and the indices fit its 32-bit lanes), Go does the rest.
func gatherValues(dst, src []float32, idx []int32, lo, hi int) {
	rows := len(src)
	if n := (hi - lo) &^ 7; hasGatherAVX2 && !noAsm && n > 0 && rows <= math.MaxInt32 {
		_, _ = dst[lo+n-1], idx[lo+n-1]
		gather1AVX2(n, &dst[lo], &src[0], &idx[lo], int32(rows-1))
		lo += n
	}
	for m := lo; m < hi; m++ {
		dst[m] = src[min(max(int(idx[m]), 0), rows-1)]
	}
}

// gatherRuns is execGather's copy for rows of c ≥ 2 elements: out[m] = src[idx[m]] for m
// in [lo, hi), indices clamped to [0, rows). Consecutive indices (r, r+1, …, the k pixels
// of a kernel row in im2col) are copied as one block, which is the same copy with fewer
// calls.
func gatherRuns(dst, src []float32, idx []int32, c, rows, lo, hi int) {
	for m := lo; m < hi; {
		r := min(max(int(idx[m]), 0), rows-1)
		n := 1 // Rows in the run: idx[m+j] = r+j, all in range.
		for m+n < hi && int(idx[m+n]) == r+n && r+n < rows {
			n++
		}
		d, s := dst[m*c:(m+n)*c], src[r*c:(r+n)*c]
		if len(d) < 16 { // Short blocks: a loop beats copy's call.
			for j := range d {
				d[j] = s[j]
			}
		} else {
			copy(d, s)
		}
		m += n
	}
}

// rowGather reports whether a Gather node is the row gather execGather implements.
func rowGather(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer) bool {
	opShape, err1 := engine.BufferShape(inputs[0])
	idxShape, err2 := engine.BufferShape(inputs[1])
	outShape := nodeShape(node)
	if err1 != nil || err2 != nil || opShape.Rank() != 2 || idxShape.Rank() != 2 || outShape.Rank() != 2 ||
		idxShape.Dimensions[1] != 1 || opShape.Dimensions[0] == 0 || opShape.Dimensions[1] == 0 ||
		outShape.Dimensions[0] != idxShape.Dimensions[0] || outShape.Dimensions[1] != opShape.Dimensions[1] {
		return false
	}
	data := nodeData(node)
	v, err := intSlices(data, "offsetOutputAxes", "collapsedSlicesAxes", "startIndexMap", "sliceSizes")
	if err != nil {
		return false
	}
	axis := private(data.Elem(), "indexVectorAxis")
	if !axis.IsValid() || axis.Kind() != reflect.Int || axis.Int() != 1 {
		return false
	}
	return slices.Equal(v[0], []int{1}) && slices.Equal(v[1], []int{0}) && slices.Equal(v[2], []int{0}) &&
		slices.Equal(v[3], []int{1, opShape.Dimensions[1]})
}

// execScatterSum replaces simplego's ScatterSum for the row scatter col2im uses: operand
// [R, c] float32, indices [M, 1] int32, updates [M, c], output[indices[m]] += updates[m].
// Like simplego it starts from the operand (reusing it when owned) and adds the updates in
// increasing m, so each output element's sum is simplego's, bit for bit; workers split the
// output rows, each scanning all updates in order and adding those that land in its rows.
// Other scatters, and any index outside [0, R), go to simplego.
func execScatterSum(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer,
	inputsOwned []bool) (*simplego.Buffer, error) {
	operand := float32Data(engine, inputs[0])
	idx := dataOf[int32](engine, inputs[1])
	updates := float32Data(engine, inputs[2])
	if lookup(engine) == nil || operand == nil || idx == nil || updates == nil || !rowScatter(engine, node, inputs) {
		return simplegoScatterSum(engine, node, inputs, inputsOwned)
	}
	outShape := nodeShape(node)
	c := outShape.Dimensions[1]
	rows := len(operand) / c
	if !rowsInRange(idx, rows) {
		return simplegoScatterSum(engine, node, inputs, inputsOwned)
	}
	var out *simplego.Buffer
	if inputsOwned[0] && sameShape(engine, inputs[0], outShape) {
		out, inputs[0] = inputs[0], nil
	} else if out = engine.NewBuffer(outShape); out == nil {
		return nil, fmt.Errorf("%s ScatterSum: backend is finalized", Name)
	}
	dst := float32Data(engine, out)
	if len(dst) > 0 && &dst[0] != &operand[0] {
		copy(dst, operand)
	}
	parallelFor(threadsOf(engine), rows, len(updates), func(lo, hi int) {
		if c == 1 { // Single values (max-pooling's gradient): no row slices.
			for m, r := range idx {
				if uint(int(r)-lo) < uint(hi-lo) {
					dst[r] += updates[m]
				}
			}
			return
		}
		scatterRuns(dst, updates, idx, c, lo, hi)
	})
	return out, nil
}

// rowsInRange reports whether every index lies in [0, rows). It is execScatterSum's check
// before each scatter (the max-pooling gradient's indices are computed in the step):
// the largest index taken as unsigned (a negative one is then ≥ 2³¹) against the bound,
// with four running maxima and no branch per index, where a test of each index for both
// ends took two compares and branches.
func rowsInRange(idx []int32, rows int) bool {
	limit := uint32(min(rows, 1<<31)) // Every non-negative int32 is below 2³¹.
	var m0, m1, m2, m3 uint32
	i := 0
	for ; i+4 <= len(idx); i += 4 {
		q := idx[i : i+4 : i+4]
		m0, m1 = max(m0, uint32(q[0])), max(m1, uint32(q[1]))
		m2, m3 = max(m2, uint32(q[2])), max(m3, uint32(q[3]))
	}
	for ; i < len(idx); i++ {
		m0 = max(m0, uint32(idx[i]))
	}
	return len(idx) == 0 || max(m0, m1, m2, m3) < limit
}

// scatterRuns is execScatterSum's sum for rows of c ≥ 2 elements: dst[idx[m]] +=
// updates[m] for every m in increasing order whose row idx[m] lies in [lo, hi). A run of
// consecutive rows (idx[m+j] = idx[m]+j, as col2im's kernel rows give) is added as one
// block: its rows are distinct, so every element still takes its additions one at a time
// in increasing m, the same operations in the same order.
func scatterRuns(dst, updates []float32, idx []int32, c, lo, hi int) {
	for m := 0; m < len(idx); {
		r := int(idx[m])
		if r < lo || r >= hi {
			m++
			continue
		}
		n := 1
		for m+n < len(idx) && int(idx[m+n]) == r+n && r+n < hi {
			n++
		}
		accumulate(dst[r*c:(r+n)*c], updates[m*c:(m+n)*c])
		m += n
	}
}

// rowScatter reports whether a ScatterSum node is the row scatter execScatterSum
// implements.
func rowScatter(engine *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer) bool {
	opShape, err1 := engine.BufferShape(inputs[0])
	idxShape, err2 := engine.BufferShape(inputs[1])
	updShape, err3 := engine.BufferShape(inputs[2])
	outShape := nodeShape(node)
	if err1 != nil || err2 != nil || err3 != nil || opShape.Rank() != 2 || idxShape.Rank() != 2 ||
		updShape.Rank() != 2 || !outShape.Equal(opShape) || idxShape.Dimensions[1] != 1 ||
		opShape.Dimensions[1] == 0 || updShape.Dimensions[0] != idxShape.Dimensions[0] ||
		updShape.Dimensions[1] != opShape.Dimensions[1] {
		return false
	}
	data := nodeData(node)
	v, err := intSlices(data, "updateWindowAxes", "insertedWindowAxes", "scatterAxesToOperandAxes")
	if err != nil {
		return false
	}
	axis := private(data.Elem(), "indexVectorAxis")
	if !axis.IsValid() || axis.Kind() != reflect.Int || axis.Int() != 1 {
		return false
	}
	return slices.Equal(v[0], []int{1}) && slices.Equal(v[1], []int{0}) && slices.Equal(v[2], []int{0})
}
