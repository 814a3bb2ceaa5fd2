//go:build amd64

package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// tallISAs returns the instruction sets whose tall kernels run here, skipping t if none.
func tallISAs(t *testing.T) []string {
	t.Helper()
	if !useAVX2 {
		t.Skip("no AVX2 and FMA here (or $FEDPIPE_GEMM_GENERIC=1): no tall kernel")
	}
	isas := KernelISAs()
	if !hasAVX512 {
		t.Log("no AVX-512 here: only the AVX2 tall kernels are checked")
	}
	return isas
}

// TestTallKernelsMatchFMAReference computes 24×16 and 25×16 tiles with the tall kernels of
// each instruction set here (AVX-512's one call, AVX2's four) and with fma32 in the
// documented order (acc = 0, acc = a[i,p]·b[p,j] + acc for p = 0…k−1, then C = acc or C = C +
// acc), for k across the loop's edge cases and strided A, B and C, and requires every bit to
// match, signed zeros included.
func TestTallKernelsMatchFMAReference(t *testing.T) {
	for _, isa := range tallISAs(t) {
		withISA(t, isa, func() { testTallKernels(t, isa) })
	}
}

func testTallKernels(t *testing.T, isa string) {
	r := rand.New(rand.NewPCG(24, 25))
	for _, rows := range []int{tallRows, tallRows + 1} {
		for _, k := range []int{1, 2, 3, 7, 16, 255, kc} {
			for _, acc := range []bool{false, true} {
				lda, ldb, ldc := rows+r.IntN(9), nr+r.IntN(40), nr+r.IntN(5)
				a := make([]float32, k*lda)
				b := make([]float32, k*ldb)
				for i := range a {
					a[i] = float32(r.NormFloat64())
				}
				for i := range b {
					b[i] = float32(r.NormFloat64())
					if r.IntN(40) == 0 {
						b[i] = float32(math.Copysign(0, float64(r.IntN(2)*2-1)))
					}
				}
				c := make([]float32, rows*ldc)
				for i := range c {
					c[i] = float32(r.NormFloat64())
				}
				want := append([]float32(nil), c...)
				for i := range rows {
					for j := range nr {
						var s float32
						for p := range k {
							s = fma32(a[p*lda+i], b[p*ldb+j], s)
						}
						if acc {
							s = want[i*ldc+j] + s
						}
						want[i*ldc+j] = s
					}
				}
				kernelTall(rows, k, a, lda, b, ldb, c, ldc, acc)
				sameBits(t, fmt.Sprintf("%s %d-row tall kernel k=%d lda=%d ldb=%d ldc=%d accumulate=%v", isa, rows, k, lda, ldb, ldc, acc), c, want)
			}
		}
	}
}

// TestSgemmTallMatchesOtherPaths computes weight-gradient-shaped products (A by columns, B
// by rows, a long reduction) with the tall path and without it, and requires the same bits
// in all of C: tiles of 24 and 25 rows with rows and columns left over (a ragged 6-row
// panel among them: 800 = 33·24 + 8), several kc blocks
// (so C is accumulated into), offsets, one and two workers, special values (NaNs with
// payloads, infinities, signed zeros, subnormals), with each instruction set's tall kernels
// (AVX2's take single tiles only). It fails if an instruction set never takes the path.
func TestSgemmTallMatchesOtherPaths(t *testing.T) {
	for _, isa := range tallISAs(t) {
		withISA(t, isa, func() { testSgemmTall(t, isa) })
	}
}

func testSgemmTall(t *testing.T, isa string) {
	r := rand.New(rand.NewPCG(25, 32))
	defer func() { tallProducts = true }()
	cases := []gemmCase{
		{m: 25, n: 32, k: 1000, transA: true}, {m: 24, n: 16, k: kc, transA: true, pad: 1},
		{m: 73, n: 17, k: 513, transA: true, pad: 2}, {m: 49, n: 64, k: 777, transA: true},
		{m: 265, n: 40, k: 300, transA: true, pad: 1}, {m: 800, n: 64, k: 2 * kc, transA: true},
	}
	taken := 0
	for i, tc := range cases {
		if !tallFits(tc.m, tc.n, tc.k, Matrix{RowStride: 1, ColStride: tc.m}, Matrix{RowStride: tc.n, ColStride: 1}) {
			if isa == "avx512" || tc.m <= tallRows+1 {
				t.Fatalf("%s: %+v does not take the tall path", isa, tc)
			}
			continue
		}
		taken++
		for _, special := range []float64{0, []float64{0.01, 0.3}[i%2]} {
			a, b := tc.matrices(r, special)
			for _, workers := range []int{1, 2} {
				tallProducts = false
				want := tc.run(a, b, workers)
				tallProducts = true
				got := tc.run(a, b, workers)
				sameBits(t, fmt.Sprintf("%s %+v special=%g workers=%d", isa, tc, special, workers), got, want)
			}
		}
	}
	if taken < 2 {
		t.Fatalf("%s: %d products took the tall path", isa, taken)
	}
}
