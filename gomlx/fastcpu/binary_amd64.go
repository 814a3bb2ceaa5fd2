package fastcpu

import "golang.org/x/sys/cpu"

// hasBinaryAVX2 reports whether the assembly loops of binary_amd64.s can run here.
var hasBinaryAVX2 = cpu.X86.HasAVX2

// Assembly elementwise loops over n values (a multiple of 8); see binary_amd64.s.
//
//go:noescape
func vaddAVX2(n int, dst, x, y *float32)

//go:noescape
func vsubAVX2(n int, dst, x, y *float32)

//go:noescape
func vmulAVX2(n int, dst, x, y *float32)

//go:noescape
func saddAVX2(n int, dst, x *float32, v float32)

//go:noescape
func ssubAVX2(n int, dst, x *float32, v float32)

//go:noescape
func smulAVX2(n int, dst, x *float32, v float32)

//go:noescape
func raddAVX2(n int, dst, x *float32, v float32)

//go:noescape
func rsubAVX2(n int, dst, x *float32, v float32)

//go:noescape
func rmulAVX2(n int, dst, x *float32, v float32)

// sumRowsAVX2 adds rows rows of n values (n a multiple of 8), stride elements apart, into
// dst in row order: dst[j] = src[r*stride+j] + dst[j]; see binary_amd64.s. rows ≥ 1.
//
//go:noescape
func sumRowsAVX2(rows, n int, dst, src *float32, stride int)

// sumRowsVec runs sumRowsAVX2 over the first multiple of 8 of dst's values and returns how
// many it did (0 without AVX2).
func sumRowsVec(dst, src []float32, rows, stride int) int {
	n := len(dst) &^ 7
	if !hasBinaryAVX2 || noAsm || n == 0 || rows <= 0 {
		return 0
	}
	_ = src[(rows-1)*stride+n-1]
	sumRowsAVX2(rows, n, &dst[0], &src[0], stride)
	return n
}

// binaryVec runs op's assembly loop over the first multiple of 8 of dst's values: vector
// op vector (y has len(dst) values), vector op scalar (scalar: y[0], right), or scalar op
// vector (left: v op x). It returns how many values it did.
func (op binaryOp) binaryVec(dst, x, y []float32, v float32, mode vecMode) int {
	n := len(dst) &^ 7
	if !hasBinaryAVX2 || noAsm || n == 0 {
		return 0
	}
	_ = x[n-1]
	d, a := &dst[0], &x[0]
	switch mode {
	case vecVec:
		_ = y[n-1]
		[3]func(int, *float32, *float32, *float32){vaddAVX2, vsubAVX2, vmulAVX2}[op](n, d, a, &y[0])
	case vecScalar:
		[3]func(int, *float32, *float32, float32){saddAVX2, ssubAVX2, smulAVX2}[op](n, d, a, v)
	case scalarVec:
		[3]func(int, *float32, *float32, float32){raddAVX2, rsubAVX2, rmulAVX2}[op](n, d, a, v)
	}
	return n
}

// vmaxAVX2 and smaxAVX2 compute dst[i] = max(x[i], y[i]) and max(x[i], v) over n values (a
// multiple of 8) with the instructions of Go's builtin max; see binary_amd64.s.
//
//go:noescape
func vmaxAVX2(n int, dst, x, y *float32)

//go:noescape
func smaxAVX2(n int, dst, x *float32, v float32)

// maxVec runs the assembly max over the first multiple of 8 of dst's values, of x and y
// (y has len(dst) values) or of x and v when y is nil, and returns how many it did (0
// without AVX2).
func maxVec(dst, x, y []float32, v float32) int {
	n := len(dst) &^ 7
	if !hasBinaryAVX2 || noAsm || n == 0 {
		return 0
	}
	_ = x[n-1]
	if y == nil {
		smaxAVX2(n, &dst[0], &x[0], v)
		return n
	}
	_ = y[n-1]
	vmaxAVX2(n, &dst[0], &x[0], &y[0])
	return n
}
