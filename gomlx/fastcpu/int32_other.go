//go:build !amd64

package fastcpu

// int32Vec does nothing off amd64: the Go loops do every value.
func (op binaryOp) int32Vec(dst, x, y []int32, v int32) int { return 0 }
