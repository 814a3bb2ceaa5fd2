//go:build !amd64

package fastcpu

// binaryVec does nothing off amd64: the Go loops do every value.
func (op binaryOp) binaryVec(dst, x, y []float32, v float32, mode vecMode) int { return 0 }

// sumRowsVec does nothing off amd64: sumRows adds every value in Go.
func sumRowsVec(dst, src []float32, rows, stride int) int { return 0 }

// maxVec does nothing off amd64: execMax takes every value in Go.
func maxVec(dst, x, y []float32, v float32) int { return 0 }
