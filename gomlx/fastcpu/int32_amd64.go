package fastcpu

// Assembly int32 loops over n values (a multiple of 8); see int32_amd64.s.
//
//go:noescape
func vaddInt32AVX2(n int, dst, x, y *int32)

//go:noescape
func vsubInt32AVX2(n int, dst, x, y *int32)

//go:noescape
func vmulInt32AVX2(n int, dst, x, y *int32)

//go:noescape
func saddInt32AVX2(n int, dst, x *int32, v int32)

//go:noescape
func ssubInt32AVX2(n int, dst, x *int32, v int32)

//go:noescape
func smulInt32AVX2(n int, dst, x *int32, v int32)

// int32Vec runs op's assembly loop over the first multiple of 8 of dst's values: x op y
// (y has len(dst) values), or x op v when y is nil. It returns how many values it did.
func (op binaryOp) int32Vec(dst, x, y []int32, v int32) int {
	n := len(dst) &^ 7
	if !hasBinaryAVX2 || noAsm || n == 0 {
		return 0
	}
	_ = x[n-1]
	d, a := &dst[0], &x[0]
	if y != nil {
		_ = y[n-1]
		[3]func(int, *int32, *int32, *int32){vaddInt32AVX2, vsubInt32AVX2, vmulInt32AVX2}[op](n, d, a, &y[0])
	} else {
		[3]func(int, *int32, *int32, int32){saddInt32AVX2, ssubInt32AVX2, smulInt32AVX2}[op](n, d, a, v)
	}
	return n
}
