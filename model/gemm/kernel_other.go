//go:build !amd64

package gemm

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
