//go:build !amd64

package gemm

// copyRows16AVX2 is never called off amd64 (useAVX2 is false).
func copyRows16AVX2(kb int, dst, src *float32, stride int) {
	panic("gemm: copyRows16AVX2 off amd64")
}
