//go:build !amd64

package fastcpu

// compareVec does nothing off amd64: the Go loops compare every value.
func compareVec(greater bool, dst []bool, x, y []float32) int { return 0 }

// selectVec does nothing off amd64: selectFloat32 selects every value in Go.
func selectVec(dst []float32, cond []bool, onTrue, onFalse []float32) int { return 0 }
