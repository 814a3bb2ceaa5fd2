package gemm

import (
	"os"

	"golang.org/x/sys/cpu"
)

// useAVX2 selects the assembly kernel; $FEDPIPE_GEMM_GENERIC=1 forces the pure-Go one.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && os.Getenv("FEDPIPE_GEMM_GENERIC") != "1"

var kernelName = map[bool]string{true: "avx2fma", false: "generic"}[useAVX2]

// kernel6x16AVX2 is the assembly micro-kernel (see kernelGeneric for its semantics, with
// fused multiply-adds); ldc is in elements.
//
//go:noescape
func kernel6x16AVX2(k int, a, b, c *float32, ldc int, accumulate bool)

// kernel runs the selected micro-kernel.
func kernel(k int, a, b, c []float32, ldc int, accumulate bool) {
	if useAVX2 {
		_ = a[k*mr-1]
		_ = b[k*nr-1]
		_ = c[(mr-1)*ldc+nr-1]
		kernel6x16AVX2(k, &a[0], &b[0], &c[0], ldc, accumulate)
		return
	}
	kernelGeneric(k, a, b, c, ldc, accumulate)
}
