package cpubackend

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// shapeOf builds a shape.
func shapeOf(dtype dtypes.DType, dims []int) shapes.Shape { return shapes.Make(dtype, dims...) }

// Builder wraps simplego's builder, overriding the ops that simplego lacks or runs slowly.
// Every op it returns is a simplego op, so compilation is simplego's.
type Builder struct {
	backends.Builder
}

// shape returns the dimensions and dtype of op.
func (b *Builder) shape(op backends.Op) ([]int, dtypes.DType, error) {
	s, err := b.OpShape(op)
	if err != nil {
		return nil, dtypes.InvalidDType, err
	}
	return slices.Clone(s.Dimensions), s.DType, nil
}

// fullSlice slices op along one axis, keeping the other axes whole.
func (b *Builder) fullSlice(op backends.Op, dims []int, axis, start, limit, stride int) (backends.Op, error) {
	starts := make([]int, len(dims))
	limits := slices.Clone(dims)
	strides := make([]int, len(dims))
	for i := range strides {
		strides[i] = 1
	}
	starts[axis], limits[axis], strides[axis] = start, limit, stride
	return b.Slice(op, starts, limits, strides)
}

// Reverse implements backends.Builder by concatenating single-element slices in reverse
// order along each axis.
func (b *Builder) Reverse(x backends.Op, axes ...int) (backends.Op, error) {
	dims, _, err := b.shape(x)
	if err != nil {
		return nil, err
	}
	out := x
	for _, axis := range axes {
		if axis < 0 || axis >= len(dims) {
			return nil, fmt.Errorf("Reverse: axis %d out of range for rank %d", axis, len(dims))
		}
		n := dims[axis]
		if n <= 1 {
			continue
		}
		parts := make([]backends.Op, n)
		for i := range n {
			if parts[i], err = b.fullSlice(out, dims, axis, n-1-i, n-i, 1); err != nil {
				return nil, err
			}
		}
		if out, err = b.Concatenate(axis, parts...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// filled returns fillValue (a scalar op) broadcast to dims.
func (b *Builder) filled(fillValue backends.Op, dtype dtypes.DType, dims []int) (backends.Op, error) {
	return b.BroadcastInDim(fillValue, shapeOf(dtype, dims), nil)
}

// Pad implements backends.Builder with Concatenate (edges), Reshape (interior padding) and
// Slice (negative padding).
func (b *Builder) Pad(x, fillValue backends.Op, axesConfig ...backends.PadAxis) (backends.Op, error) {
	dims, dtype, err := b.shape(x)
	if err != nil {
		return nil, err
	}
	if len(axesConfig) > len(dims) {
		return nil, fmt.Errorf("Pad: %d axes configured for a rank-%d operand", len(axesConfig), len(dims))
	}
	out := x
	for axis, pc := range axesConfig {
		if pc.Interior < 0 {
			return nil, fmt.Errorf("Pad: negative interior padding %d on axis %d", pc.Interior, axis)
		}
		if pc.Interior > 0 && dims[axis] > 1 {
			// [..., n, ...] -> [..., n, 1, ...] ++ fill[..., n, interior, ...] -> [..., n*(1+interior), ...],
			// then drop the trailing interior block.
			n := dims[axis]
			expanded := slices.Insert(slices.Clone(dims), axis+1, 1)
			if out, err = b.Reshape(out, expanded...); err != nil {
				return nil, err
			}
			fillDims := slices.Clone(expanded)
			fillDims[axis+1] = pc.Interior
			fill, err := b.filled(fillValue, dtype, fillDims)
			if err != nil {
				return nil, err
			}
			if out, err = b.Concatenate(axis+1, out, fill); err != nil {
				return nil, err
			}
			dims[axis] = n * (1 + pc.Interior)
			if out, err = b.Reshape(out, dims...); err != nil {
				return nil, err
			}
			newLen := n + (n-1)*pc.Interior
			if out, err = b.fullSlice(out, dims, axis, 0, newLen, 1); err != nil {
				return nil, err
			}
			dims[axis] = newLen
		}
		// Negative edges cut, positive edges add fill.
		start, end := 0, dims[axis]
		if pc.Start < 0 {
			start = -pc.Start
		}
		if pc.End < 0 {
			end += pc.End
		}
		if start > end {
			return nil, fmt.Errorf("Pad: negative padding (%d, %d) larger than axis %d (dim %d)", pc.Start, pc.End, axis, dims[axis])
		}
		if start != 0 || end != dims[axis] {
			if out, err = b.fullSlice(out, dims, axis, start, end, 1); err != nil {
				return nil, err
			}
			dims[axis] = end - start
		}
		var parts []backends.Op
		if pc.Start > 0 {
			d := slices.Clone(dims)
			d[axis] = pc.Start
			f, err := b.filled(fillValue, dtype, d)
			if err != nil {
				return nil, err
			}
			parts = append(parts, f)
		}
		parts = append(parts, out)
		if pc.End > 0 {
			d := slices.Clone(dims)
			d[axis] = pc.End
			f, err := b.filled(fillValue, dtype, d)
			if err != nil {
				return nil, err
			}
			parts = append(parts, f)
		}
		if len(parts) > 1 {
			if out, err = b.Concatenate(axis, parts...); err != nil {
				return nil, err
			}
			dims[axis] += max(pc.Start, 0) + max(pc.End, 0)
		}
	}
	return out, nil
}

// ones returns a slice of n ones.
func ones(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// ConvGeneral implements backends.Builder. Missing strides, paddings and dilations are
// filled in; convolutions without input dilation or grouping are lowered to im2col (one
// strided Slice per kernel position, concatenated) and a single DotGeneral. Others are
// passed to simplego.
func (b *Builder) ConvGeneral(input, kernel backends.Op, axes backends.ConvolveAxesConfig,
	strides []int, paddings [][2]int, inputDilations, kernelDilations []int,
	channelGroupCount, batchGroupCount int) (backends.Op, error) {
	n := len(axes.InputSpatial)
	fill := func(s []int) []int {
		if len(s) == 0 {
			return ones(n)
		}
		s = slices.Clone(s)
		for i := range s {
			s[i] = max(s[i], 1)
		}
		return s
	}
	strides, inputDilations, kernelDilations = fill(strides), fill(inputDilations), fill(kernelDilations)
	if len(paddings) == 0 {
		paddings = make([][2]int, n)
	}
	channelGroupCount, batchGroupCount = max(channelGroupCount, 1), max(batchGroupCount, 1)
	simple := channelGroupCount == 1 && batchGroupCount == 1
	for _, d := range inputDilations {
		simple = simple && d == 1
	}
	if !simple {
		return b.Builder.ConvGeneral(input, kernel, axes, strides, paddings, inputDilations, kernelDilations,
			channelGroupCount, batchGroupCount)
	}
	return b.im2colConv(input, kernel, axes, strides, paddings, kernelDilations)
}

// im2colConv lowers a plain (ungrouped, no input dilation) convolution to im2col + DotGeneral.
func (b *Builder) im2colConv(input, kernel backends.Op, axes backends.ConvolveAxesConfig,
	strides []int, paddings [][2]int, kernelDilations []int) (backends.Op, error) {
	n := len(axes.InputSpatial)
	inDims, dtype, err := b.shape(input)
	if err != nil {
		return nil, err
	}
	kDims, _, err := b.shape(kernel)
	if err != nil {
		return nil, err
	}
	// Input to [B, S..., C].
	perm := append([]int{axes.InputBatch}, axes.InputSpatial...)
	perm = append(perm, axes.InputChannels)
	x, err := b.Transpose(input, perm...)
	if err != nil {
		return nil, err
	}
	xDims := make([]int, len(perm))
	for i, p := range perm {
		xDims[i] = inDims[p]
	}
	// Zero padding of the spatial axes.
	needPad := false
	padCfg := make([]backends.PadAxis, n+2)
	for i, p := range paddings {
		padCfg[i+1] = backends.PadAxis{Start: p[0], End: p[1]}
		needPad = needPad || p != [2]int{}
	}
	if needPad {
		zero, err := b.scalarZero(dtype)
		if err != nil {
			return nil, err
		}
		if x, err = b.Pad(x, zero, padCfg...); err != nil {
			return nil, err
		}
		for i, p := range paddings {
			xDims[i+1] += p[0] + p[1]
		}
	}
	// Kernel to [K..., Cin, Cout] then [prod(K)*Cin, Cout].
	kPerm := append(slices.Clone(axes.KernelSpatial), axes.KernelInputChannels, axes.KernelOutputChannels)
	k, err := b.Transpose(kernel, kPerm...)
	if err != nil {
		return nil, err
	}
	kSpatial := make([]int, n)
	numPos := 1
	for i, a := range axes.KernelSpatial {
		kSpatial[i] = kDims[a]
		numPos *= kDims[a]
	}
	cin, cout := kDims[axes.KernelInputChannels], kDims[axes.KernelOutputChannels]
	if cin != xDims[n+1] {
		return nil, fmt.Errorf("ConvGeneral: input has %d channels, kernel expects %d", xDims[n+1], cin)
	}
	if k, err = b.Reshape(k, numPos*cin, cout); err != nil {
		return nil, err
	}
	// Output spatial sizes.
	outSpatial := make([]int, n)
	numOut := xDims[0]
	for i := range n {
		span := (kSpatial[i]-1)*kernelDilations[i] + 1
		if xDims[i+1] < span {
			return nil, fmt.Errorf("ConvGeneral: spatial axis %d of size %d (after padding) smaller than the dilated kernel (%d)",
				i, xDims[i+1], span)
		}
		outSpatial[i] = (xDims[i+1]-span)/strides[i] + 1
		numOut *= outSpatial[i]
	}
	// One strided slice per kernel position.
	patches := make([]backends.Op, 0, numPos)
	pos := make([]int, n)
	for range numPos {
		starts := make([]int, n+2)
		limits := slices.Clone(xDims)
		sliceStrides := ones(n + 2)
		for i := range n {
			starts[i+1] = pos[i] * kernelDilations[i]
			limits[i+1] = starts[i+1] + (outSpatial[i]-1)*strides[i] + 1
			sliceStrides[i+1] = strides[i]
		}
		p, err := b.Slice(x, starts, limits, sliceStrides)
		if err != nil {
			return nil, err
		}
		patches = append(patches, p)
		for i := n - 1; i >= 0; i-- { // Row-major increment of the kernel position.
			pos[i]++
			if pos[i] < kSpatial[i] {
				break
			}
			pos[i] = 0
		}
	}
	cols := patches[0]
	if len(patches) > 1 {
		if cols, err = b.Concatenate(n+1, patches...); err != nil {
			return nil, err
		}
	}
	if cols, err = b.Reshape(cols, numOut, numPos*cin); err != nil {
		return nil, err
	}
	out, err := b.DotGeneral(cols, []int{1}, nil, k, []int{0}, nil)
	if err != nil {
		return nil, err
	}
	ourDims := append(append([]int{xDims[0]}, outSpatial...), cout)
	if out, err = b.Reshape(out, ourDims...); err != nil {
		return nil, err
	}
	// [B, S..., Cout] to the requested output layout.
	outPerm := make([]int, n+2)
	outPerm[axes.OutputBatch] = 0
	outPerm[axes.OutputChannels] = n + 1
	for i, a := range axes.OutputSpatial {
		outPerm[a] = i + 1
	}
	return b.Transpose(out, outPerm...)
}

// scalarZero returns a scalar 0 of the given dtype.
func (b *Builder) scalarZero(dtype dtypes.DType) (backends.Op, error) {
	z, err := b.Constant([]float32{0})
	if err != nil {
		return nil, err
	}
	if dtype == dtypes.Float32 {
		return z, nil
	}
	return b.ConvertDType(z, dtype)
}

// SelectAndScatterMax implements backends.Builder for windows that tile the operand (each
// window's stride equal to its size, no padding), as max-pooling's gradient has them: each
// source value goes to its window's first maximal operand element (in the window's
// row-major order, as XLA's SelectAndScatter with a GE selection picks it), every other
// element, and those no window covers, get 0. It is composed of simplego ops: the windows
// are cut out (Slice, Reshape, Transpose), one ArgMax finds each window's element and a
// Where puts the source there.
func (b *Builder) SelectAndScatterMax(operand, source backends.Op, windowDimensions, windowStrides []int,
	paddings [][2]int) (backends.Op, error) {
	dims, dtype, err := b.shape(operand)
	if err != nil {
		return nil, err
	}
	srcDims, _, err := b.shape(source)
	if err != nil {
		return nil, err
	}
	rank := len(dims)
	if len(windowDimensions) != rank || len(srcDims) != rank {
		return nil, fmt.Errorf("SelectAndScatterMax: operand rank %d, window %v, source rank %d", rank, windowDimensions, len(srcDims))
	}
	for _, p := range paddings {
		if p != [2]int{} {
			return nil, fmt.Errorf("SelectAndScatterMax: padding %v not supported here", paddings)
		}
	}
	// n: windows per axis; covered: the operand's part the windows cover.
	n, covered := make([]int, rank), make([]int, rank)
	split := make([]int, 0, 2*rank) // [n0, w0, n1, w1, ...]
	perm := make([]int, 2*rank)     // to [n0, n1, ..., w0, w1, ...]
	windows, size := 1, 1
	for i, w := range windowDimensions {
		stride := w
		if len(windowStrides) > 0 {
			stride = windowStrides[i]
		}
		if w < 1 || stride != w {
			return nil, fmt.Errorf("SelectAndScatterMax: window %v with strides %v: only windows that tile the operand are supported",
				windowDimensions, windowStrides)
		}
		n[i] = dims[i] / w
		if n[i] != srcDims[i] {
			return nil, fmt.Errorf("SelectAndScatterMax: source %v does not match operand %v pooled by %v", srcDims, dims, windowDimensions)
		}
		covered[i] = n[i] * w
		split = append(split, n[i], w)
		perm[i], perm[rank+i] = 2*i, 2*i+1
		windows *= n[i]
		size *= w
	}
	zero, err := b.scalarZero(dtype)
	if err != nil {
		return nil, err
	}
	if windows == 0 {
		return b.filled(zero, dtype, dims)
	}
	x := operand
	if !slices.Equal(covered, dims) {
		if x, err = b.Slice(x, make([]int, rank), covered, ones(rank)); err != nil {
			return nil, err
		}
	}
	if x, err = b.Reshape(x, split...); err != nil {
		return nil, err
	}
	if x, err = b.Transpose(x, perm...); err != nil {
		return nil, err
	}
	if x, err = b.Reshape(x, windows, size); err != nil {
		return nil, err
	}
	arg, err := b.ArgMinMax(x, 1, dtypes.Int32, false)
	if err != nil {
		return nil, err
	}
	flat := shapeOf(dtypes.Int32, []int{windows, size})
	iota, err := b.Iota(flat, 1)
	if err != nil {
		return nil, err
	}
	argB, err := b.BroadcastInDim(arg, flat, []int{0})
	if err != nil {
		return nil, err
	}
	chosen, err := b.Equal(iota, argB)
	if err != nil {
		return nil, err
	}
	src, err := b.Reshape(source, windows)
	if err != nil {
		return nil, err
	}
	if src, err = b.BroadcastInDim(src, shapeOf(dtype, []int{windows, size}), []int{0}); err != nil {
		return nil, err
	}
	zeros, err := b.filled(zero, dtype, []int{windows, size})
	if err != nil {
		return nil, err
	}
	out, err := b.Where(chosen, src, zeros)
	if err != nil {
		return nil, err
	}
	// Back to the operand's layout: [n0, n1, ..., w0, w1, ...] → [n0, w0, n1, w1, ...].
	tiled := make([]int, 0, 2*rank)
	inv := make([]int, 2*rank)
	for i := range rank {
		tiled = append(tiled, n[i])
		inv[2*i], inv[2*i+1] = i, rank+i
	}
	for i := range rank {
		tiled = append(tiled, windowDimensions[i])
	}
	if out, err = b.Reshape(out, tiled...); err != nil {
		return nil, err
	}
	if out, err = b.Transpose(out, inv...); err != nil {
		return nil, err
	}
	if out, err = b.Reshape(out, covered...); err != nil {
		return nil, err
	}
	if !slices.Equal(covered, dims) {
		pad := make([]backends.PadAxis, rank)
		for i := range rank {
			pad[i].End = dims[i] - covered[i]
		}
		return b.Pad(out, zero, pad...)
	}
	return out, nil
}
