//go:build !amd64

package fastcpu

// hasGatherAVX2 is false off amd64: execGather copies single values in Go.
const hasGatherAVX2 = false

// gather1AVX2 is never called off amd64.
func gather1AVX2(n int, dst, src *float32, idx *int32, last int32) {
	panic("fastcpu: gather1AVX2 off amd64")
}
