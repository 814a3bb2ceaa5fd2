//go:build !amd64

package gemm

const kernelName = "generic"

// useAVX2 is always false off amd64 (tests read it).
var useAVX2 = false

// kernel runs the pure-Go micro-kernel.
func kernel(k int, a, b, c []float32, ldc int, accumulate bool) {
	kernelGeneric(k, a, b, c, ldc, accumulate)
}
