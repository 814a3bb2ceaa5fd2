//go:build !amd64

package gemm

import "fmt"

const kernelName = "generic"

// useAVX2 is always false off amd64 (tests read it).
var useAVX2 = false

// kernel runs the pure-Go micro-kernel.
func kernel(k int, a, b, c []float32, ldc int, accumulate bool) {
	kernelGeneric(k, a, b, c, ldc, accumulate)
}

// hasRowsKernel reports whether kernelRows and kernelCols run without packing A: never
// off amd64.
func hasRowsKernel() bool { return false }

// kernelRows is not used off amd64 (hasRowsKernel is false).
func kernelRows(k int, a []float32, lda int, b, c []float32, ldc int, accumulate bool) {
	panic("gemm: kernelRows without an in-place kernel")
}

// kernelCols is not used off amd64 (hasRowsKernel is false).
func kernelCols(k int, a []float32, lda int, b, c []float32, ldc int, accumulate bool) {
	panic("gemm: kernelCols without an in-place kernel")
}

// KernelISA names the instruction set of the micro-kernels in use: "generic" off amd64.
func KernelISA() string { return "generic" }

// KernelISAs lists the instruction sets SetKernelISA accepts here: only "generic".
func KernelISAs() []string { return []string{"generic"} }

// SetKernelISA accepts only "generic" off amd64 (see the amd64 version).
func SetKernelISA(isa string) error {
	if isa != "generic" {
		return fmt.Errorf("gemm: kernel %q unavailable here (have [generic])", isa)
	}
	return nil
}

// hasWideKernel reports whether the kernelWide functions may run: never off amd64.
func hasWideKernel() bool { return false }

// kernelWide is not used off amd64 (hasWideKernel is false).
func kernelWide(k int, a, b, c []float32, ldc int, accumulate bool) {
	panic("gemm: kernelWide without a wide kernel")
}

// kernelWideRows is not used off amd64 (hasWideKernel is false).
func kernelWideRows(k int, a []float32, lda int, b, c []float32, ldc int, accumulate bool) {
	panic("gemm: kernelWideRows without a wide kernel")
}

// kernelWideCols is not used off amd64 (hasWideKernel is false).
func kernelWideCols(k int, a []float32, lda int, b, c []float32, ldc int, accumulate bool) {
	panic("gemm: kernelWideCols without a wide kernel")
}

// hasTallKernel reports whether kernelTall may run: never off amd64.
func hasTallKernel() bool { return false }

// tallMaxM is 0 off amd64 (no tall kernels).
func tallMaxM() int { return 0 }

// kernelTall is not used off amd64 (hasTallKernel is false).
func kernelTall(rows, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	panic("gemm: kernelTall without its assembly kernel")
}

// peakLoop has no loop off amd64 (FMAPeak returns 0).
func peakLoop() (func(int), float64, string) { return nil, 0, "" }
