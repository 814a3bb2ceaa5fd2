//go:build !amd64

package fastcpu

// hasArgMaxAVX2 is false off amd64: argExtreme runs in Go.
const hasArgMaxAVX2 = false

// argMaxAVX2 is never called off amd64.
func argMaxAVX2(n int, src *float32, stride int, red int, arg *int32) {
	panic("fastcpu: argMaxAVX2 off amd64")
}
