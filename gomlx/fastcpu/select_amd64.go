package fastcpu

import "golang.org/x/sys/cpu"

// hasSelectAVX2 reports whether the assembly of select_amd64.s can run here (PDEP is BMI2).
var hasSelectAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasBMI2

// Assembly comparison and selection loops over n values (a multiple of 8); see
// select_amd64.s.
//
//go:noescape
func gtAVX2(n int, dst *bool, x *float32, xstep int, y *float32, ystep int)

//go:noescape
func eqAVX2(n int, dst *bool, x *float32, xstep int, y *float32, ystep int)

//go:noescape
func selAVX2(n int, dst *float32, cond *bool, t *float32, tstep int, f *float32, fstep int)

// spreadOperand returns where the assembly reads an operand of n values from and its step per 8
// values: the slice itself (32 bytes), or for a one-value slice (a scalar) 8 copies of it
// in *spread (0 bytes).
func spreadOperand(v []float32, n int, spread *[8]float32) (*float32, int) {
	if len(v) == 1 {
		for i := range spread {
			spread[i] = v[0]
		}
		return &spread[0], 0
	}
	_ = v[n-1]
	return &v[0], 32
}

// compareVec sets dst[i] = x[i] > y[i] (greater) or x[i] == y[i] over the first multiple of
// 8 of dst's values, where x and y each hold len(dst) values or one (a scalar), and returns
// how many it did (0 without the assembly).
func compareVec(greater bool, dst []bool, x, y []float32) int {
	n := len(dst) &^ 7
	if !hasSelectAVX2 || noAsm || n == 0 {
		return 0
	}
	var xs, ys [8]float32
	xp, xstep := spreadOperand(x, n, &xs)
	yp, ystep := spreadOperand(y, n, &ys)
	if greater {
		gtAVX2(n, &dst[0], xp, xstep, yp, ystep)
	} else {
		eqAVX2(n, &dst[0], xp, xstep, yp, ystep)
	}
	return n
}

// selectVec sets dst[i] = onTrue[i] where cond[i], else onFalse[i], over the first multiple
// of 8 of dst's values (each value slice holding len(dst) values or one, a scalar), and
// returns how many it did (0 without the assembly).
func selectVec(dst []float32, cond []bool, onTrue, onFalse []float32) int {
	n := len(dst) &^ 7
	if !hasSelectAVX2 || noAsm || n == 0 {
		return 0
	}
	_ = cond[n-1]
	var ts, fs [8]float32
	tp, tstep := spreadOperand(onTrue, n, &ts)
	fp, fstep := spreadOperand(onFalse, n, &fs)
	selAVX2(n, &dst[0], &cond[0], tp, tstep, fp, fstep)
	return n
}
