package fastcpu

import (
	"github.com/fedpipe/fedpipe/gomlx/gemm"
)

// group is a set of axes of an operand that DotGeneral treats as one (batch, cross or
// contracting): their dimensions and row-major strides, in order.
type group struct {
	dims, strides []int
	size          int
	// stride is the stride of the merged axis, valid when merged is true (the group's axes
	// are laid out like a single axis).
	stride int
	merged bool
}

func newGroup(axes, dims, strides []int) group {
	g := group{size: 1, merged: true}
	for _, a := range axes {
		g.size *= dims[a]
		if dims[a] == 1 {
			continue // Size-1 axes do not affect the layout.
		}
		if len(g.dims) > 0 && g.strides[len(g.strides)-1] != strides[a]*dims[a] {
			g.merged = false
		}
		g.dims = append(g.dims, dims[a])
		g.strides = append(g.strides, strides[a])
	}
	if len(g.strides) > 0 {
		g.stride = g.strides[len(g.strides)-1]
	}
	return g
}

// operand is one DotGeneral input viewed as [batch, cross, contract].
type operand struct {
	data                   []float32
	batch, cross, contract group
}

// newOperand groups the axes of a row-major tensor: batch and contracting axes in the given
// order, the remaining (cross) axes in increasing order. If a group cannot be addressed with
// a single stride, the operand is copied into a contiguous [batch, cross, contract] layout.
func newOperand(data []float32, dims, contracting, batch []int) operand {
	strides := make([]int, len(dims))
	acc := 1
	for i := len(dims) - 1; i >= 0; i-- {
		strides[i] = acc
		acc *= dims[i]
	}
	kind := make([]byte, len(dims))
	for _, a := range contracting {
		kind[a] = 'k'
	}
	for _, a := range batch {
		kind[a] = 'b'
	}
	var cross []int
	for a := range dims {
		if kind[a] == 0 {
			cross = append(cross, a)
		}
	}
	op := operand{data: data, batch: newGroup(batch, dims, strides), cross: newGroup(cross, dims, strides),
		contract: newGroup(contracting, dims, strides)}
	if op.batch.merged && op.cross.merged && op.contract.merged {
		return op
	}
	// Gather into [batch, cross, contract].
	order := append(append(append([]int(nil), batch...), cross...), contracting...)
	odims := make([]int, len(order))
	ostrides := make([]int, len(order))
	for i, a := range order {
		odims[i], ostrides[i] = dims[a], strides[a]
	}
	dst := make([]float32, len(data))
	idx := make([]int, len(order))
	src := 0
	for i := range dst {
		dst[i] = data[src]
		for ax := len(order) - 1; ax >= 0; ax-- { // Odometer over the output axes.
			idx[ax]++
			src += ostrides[ax]
			if idx[ax] < odims[ax] {
				break
			}
			src -= idx[ax] * ostrides[ax]
			idx[ax] = 0
		}
	}
	m, k := op.cross.size, op.contract.size
	return operand{data: dst,
		batch:    group{size: op.batch.size, stride: m * k, merged: true},
		cross:    group{size: m, stride: k, merged: true},
		contract: group{size: k, stride: 1, merged: true}}
}

// dotGeneral computes out[b, i, j] = Σ_p lhs[b, i, p]·rhs[b, j, p] into out (row-major
// [batch, lhs cross, rhs cross]).
func dotGeneral(lhs, rhs operand, out []float32, workers int) {
	m, n, k := lhs.cross.size, rhs.cross.size, lhs.contract.size
	for b := range lhs.batch.size {
		a := gemm.Matrix{Data: lhs.data, Offset: b * lhs.batch.stride, RowStride: lhs.cross.stride, ColStride: lhs.contract.stride}
		bm := gemm.Matrix{Data: rhs.data, Offset: b * rhs.batch.stride, RowStride: rhs.contract.stride, ColStride: rhs.cross.stride}
		gemm.Sgemm(m, n, k, a, bm, out, b*m*n, n, workers)
	}
}
