package gemm

import (
	"os"

	"golang.org/x/sys/cpu"
)

// useAVX2 selects the assembly kernel; $FEDPIPE_GEMM_GENERIC=1 forces the pure-Go one.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && os.Getenv("FEDPIPE_GEMM_GENERIC") != "1"

var kernelName = map[bool]string{true: "avx2fma", false: "generic"}[useAVX2]

// kernel6x16AVX2Rows is kernel6x16AVX2Cols reading A by rows, a[i*lda+p]; lda and ldc are
// in elements.
//
//go:noescape
func kernel6x16AVX2Rows(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)

// kernel6x16AVX2Cols is the assembly micro-kernel (see kernelGeneric for its semantics,
// with fused multiply-adds) reading A's column p at a[p*lda:] (lda = mr: a packed panel);
// lda and ldc are in elements.
//
//go:noescape
func kernel6x16AVX2Cols(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)

// hasRowsKernel reports whether kernelRows and kernelCols run without packing A.
func hasRowsKernel() bool { return useAVX2 }

// kernelCols runs the micro-kernel on mr rows of A read in place from column-major
// storage (A[i, p] at a[p*lda+i]); only when hasRowsKernel.
func kernelCols(k int, a []float32, lda int, b, c []float32, ldc int, accumulate bool) {
	_ = a[(k-1)*lda+mr-1]
	_ = b[k*nr-1]
	_ = c[(mr-1)*ldc+nr-1]
	kernel6x16AVX2Cols(k, &a[0], lda, &b[0], &c[0], ldc, accumulate)
}

// kernelRows runs the micro-kernel on mr rows of A read in place (row i at a[i*lda:], its
// k values contiguous), for A whose rows are contiguous; only when hasRowsKernel.
func kernelRows(k int, a []float32, lda int, b, c []float32, ldc int, accumulate bool) {
	_ = a[(mr-1)*lda+k-1]
	_ = b[k*nr-1]
	_ = c[(mr-1)*ldc+nr-1]
	kernel6x16AVX2Rows(k, &a[0], lda, &b[0], &c[0], ldc, accumulate)
}

// kernel runs the selected micro-kernel.
func kernel(k int, a, b, c []float32, ldc int, accumulate bool) {
	if useAVX2 {
		_ = a[k*mr-1]
		_ = b[k*nr-1]
		_ = c[(mr-1)*ldc+nr-1]
		kernel6x16AVX2Cols(k, &a[0], mr, &b[0], &c[0], ldc, accumulate)
		return
	}
	kernelGeneric(k, a, b, c, ldc, accumulate)
}
