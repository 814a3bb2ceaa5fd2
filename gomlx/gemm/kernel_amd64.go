package gemm

import (
	"fmt"
	"os"

	"golang.org/x/sys/cpu"
)

// useAVX2 selects the assembly kernels; $FEDPIPE_GEMM_GENERIC=1 forces the pure-Go one.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA && os.Getenv("FEDPIPE_GEMM_GENERIC") != "1"

// kernelName is the numeric identity of the kernels in use (see Kernel). The AVX-512 kernels
// compute the AVX2 kernels' results bit for bit, so both are "avx2fma".
var kernelName = map[bool]string{true: "avx2fma", false: "generic"}[useAVX2]

// hasAVX512 reports whether the CPU and OS run the AVX-512F kernel of kernel512_amd64.s
// (x/sys/cpu checks that the OS saves the zmm registers).
var hasAVX512 = cpu.X86.HasAVX512F

// useAVX512 selects the AVX-512 kernel (6×32: two B panels at once) besides the AVX2 ones
// where the CPU has it, unless $FEDPIPE_KERNEL=avx2. SetKernelISA changes it (only between
// products, never during one).
var useAVX512 = useAVX2 && hasAVX512 && os.Getenv("FEDPIPE_KERNEL") != "avx2"

// KernelISA names the instruction set the micro-kernels in use are written for: "avx512",
// "avx2" or "generic". It is for display only: "avx512" and "avx2" give the same bits (see
// Kernel, which is the identity of results).
func KernelISA() string {
	switch {
	case useAVX512:
		return "avx512"
	case useAVX2:
		return "avx2"
	}
	return "generic"
}

// KernelISAs lists the instruction sets SetKernelISA accepts on this machine, best first.
func KernelISAs() []string {
	switch {
	case useAVX2 && hasAVX512:
		return []string{"avx512", "avx2"}
	case useAVX2:
		return []string{"avx2"}
	}
	return []string{"generic"}
}

// SetKernelISA switches the micro-kernels between those of KernelISAs (for benchmarks that
// compare them in one process). The choice cannot change any result, only the speed. It must
// not be called while an Sgemm runs.
func SetKernelISA(isa string) error {
	switch {
	case isa == "avx512" && useAVX2 && hasAVX512:
		useAVX512 = true
	case isa == "avx2" && useAVX2:
		useAVX512 = false
	case isa == "generic" && !useAVX2:
	default:
		return fmt.Errorf("gemm: kernel %q unavailable here (have %v)", isa, KernelISAs())
	}
	return nil
}

// kernel6x16AVX2Rows is kernel6x16AVX2Cols reading A by rows, a[i*lda+p]; lda and ldc are
// in elements.
//
//go:noescape
func kernel6x16AVX2Rows(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)

// kernel6x16AVX2Cols is the assembly micro-kernel (see kernelGeneric for its semantics,
// with fused multiply-adds) reading A's column p at a[p*lda:] (lda = mr: a packed panel);
// lda and ldc are in elements. Where A's columns lie 2 KiB or more apart and k ≥ 64, it
// prefetches the column 16 steps ahead (no hardware prefetcher follows such strides); that
// changes no result.
//
//go:noescape
func kernel6x16AVX2Cols(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)

// kernel6x32AVX512Rows computes two adjacent 6×16 tiles at once: the B panels at b and
// b + k·16, into columns 0–15 and 16–31 of C; each element as kernel6x16AVX2Rows does.
//
//go:noescape
func kernel6x32AVX512Rows(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)

// kernel6x32AVX512Cols is kernel6x32AVX512Rows reading A by columns (a[p*lda+i]),
// prefetching as kernel6x16AVX2Cols does.
//
//go:noescape
func kernel6x32AVX512Cols(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)

// hasRowsKernel reports whether kernelRows and kernelCols run without packing A.
func hasRowsKernel() bool { return useAVX2 }

// hasWideKernel reports whether the kernelWide functions (two B panels at once) may run.
func hasWideKernel() bool { return useAVX512 }

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

// kernelWide is kernel over 2·nr columns: B's packed panels at b and b[k*nr:]; only when
// hasWideKernel.
func kernelWide(k int, a, b, c []float32, ldc int, accumulate bool) {
	kernelWideCols(k, a, mr, b, c, ldc, accumulate)
}

// kernelWideRows is kernelRows over 2·nr columns (see kernelWide).
func kernelWideRows(k int, a []float32, lda int, b, c []float32, ldc int, accumulate bool) {
	_ = a[(mr-1)*lda+k-1]
	_ = b[2*k*nr-1]
	_ = c[(mr-1)*ldc+2*nr-1]
	kernel6x32AVX512Rows(k, &a[0], lda, &b[0], &c[0], ldc, accumulate)
}

// kernelWideCols is kernelCols over 2·nr columns (see kernelWide).
func kernelWideCols(k int, a []float32, lda int, b, c []float32, ldc int, accumulate bool) {
	_ = a[(k-1)*lda+mr-1]
	_ = b[2*k*nr-1]
	_ = c[(mr-1)*ldc+2*nr-1]
	kernel6x32AVX512Cols(k, &a[0], lda, &b[0], &c[0], ldc, accumulate)
}

// cpuHasAVX2 reports whether the CPU has AVX2 and FMA, whatever kernel is selected.
var cpuHasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA
