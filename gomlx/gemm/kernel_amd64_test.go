//go:build amd64

package gemm

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fma32 is a float32 fused multiply-add computed exactly and rounded once: a·b + c to the
// nearest float32, ties to even (finite operands; a product of float32s and the sum are
// exact in 512 bits).
func fma32(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(512).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(512).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(512).SetFloat64(float64(c)))
	if x.Sign() == 0 {
		// An exact zero: IEEE gives -0 only when both the product and c are -0.
		if math.Signbit(float64(a)) != math.Signbit(float64(b)) && math.Signbit(float64(c)) {
			return float32(math.Copysign(0, -1))
		}
		return 0
	}
	f, _ := x.Float32()
	return f
}

// TestKernelsMatchFMAReference computes 6×16 (and, with AVX-512, 6×32) tiles with every
// assembly kernel (A by rows, by columns in place with a stride the prefetch follows, and
// packed) and with fma32 in the kernels' documented order: acc = 0, then acc = a[i,p]·b[p,j]
// + acc for p = 0, 1, …, k−1, then C = acc or C = C + acc. Every bit must match, for every
// k up to past the unrolled steps' remainders and one kc block, so a change to a kernel's
// loops is checked against arithmetic, not against another kernel.
func TestKernelsMatchFMAReference(t *testing.T) {
	if !useAVX2 {
		t.Skip("this CPU lacks AVX2 and FMA (or $FEDPIPE_GEMM_GENERIC=1): no assembly kernel to check")
	}
	type kern func(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)
	type kernel struct {
		name   string
		f      kern
		rows   bool // A by rows (else by columns)
		panels int
	}
	kernels := []kernel{{"avx2-rows", kernel6x16AVX2Rows, true, 1}, {"avx2-cols", kernel6x16AVX2Cols, false, 1}}
	if hasAVX512 {
		kernels = append(kernels, kernel{"avx512-rows", kernel6x32AVX512Rows, true, 2},
			kernel{"avx512-cols", kernel6x32AVX512Cols, false, 2})
	} else {
		t.Log("no AVX-512 here: its kernels are not checked")
	}
	r := rand.New(rand.NewPCG(48, 6))
	ks := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 17, 63, 64, 65, 66, 67, 68, 80, 81, 255, kc}
	for _, kk := range kernels {
		for _, k := range ks {
			for _, lda := range []int{mr, mr + 5, 600} { // 600 floats apart: the Cols prefetch runs
				if kk.rows && lda != mr {
					continue
				}
				for _, acc := range []bool{false, true} {
					n := kk.panels * nr
					kd := max(k, 1)
					var a []float32
					at := func(i, p int) float32 { return a[p*lda+i] }
					if kk.rows {
						a = make([]float32, mr*(kd+3))
						at = func(i, p int) float32 { return a[i*(kd+3)+p] }
					} else {
						a = make([]float32, kd*lda)
					}
					b := make([]float32, kd*n)
					for i := range a {
						a[i] = float32(r.NormFloat64())
					}
					for i := range b {
						b[i] = float32(r.NormFloat64())
						if r.IntN(50) == 0 {
							b[i] = float32(math.Copysign(0, float64(r.IntN(2)*2-1)))
						}
					}
					ldc := n + 3
					c := make([]float32, mr*ldc)
					for i := range c {
						c[i] = float32(r.NormFloat64())
					}
					want := append([]float32(nil), c...)
					for i := range mr {
						for j := range n {
							// B is packed panel by panel: column j of panel j/nr at (j/nr)·k·nr.
							var s float32
							for p := range k {
								s = fma32(at(i, p), b[(j/nr)*k*nr+p*nr+j%nr], s)
							}
							if acc {
								s = want[i*ldc+j] + s
							}
							want[i*ldc+j] = s
						}
					}
					ldA := lda
					if kk.rows {
						ldA = kd + 3
					}
					kk.f(k, &a[0], ldA, &b[0], &c[0], ldc, acc)
					for i := range c {
						if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s k=%d lda=%d accumulate=%v: C[%d] is %v (%#08x), the reference %v (%#08x)",
								kk.name, k, lda, acc, i, c[i], math.Float32bits(c[i]), want[i], math.Float32bits(want[i]))
						}
					}
				}
			}
		}
	}
}
