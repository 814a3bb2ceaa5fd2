package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSgemmRowsMatchesSgemm checks that SgemmRows, and SgemmRowsFrom with A's rows made a
// block at a time, hand over every row of C once, in blocks of increasing rows, with Sgemm's bits (NaNs, infinities and signed zeros among the
// operands), for A by rows and by columns, B plain and transposed, ragged row blocks and kernel
// panels, k past one KC block, k = 0, and cnn4's conv2 input-gradient product.
func TestSgemmRowsMatchesSgemm(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, tc := range []struct{ m, n, k int }{
		{2048, 800, 64}, {100, 37, 300}, {7, 5, 3}, {96, 64, 513}, {193, 33, 1}, {1, 1, 1}, {13, 9, 0},
	} {
		for _, aT := range []bool{false, true} {
			for _, bT := range []bool{false, true} {
				a, b := make([]float32, tc.m*tc.k), make([]float32, tc.k*tc.n)
				for i := range a {
					a[i] = rowsTestValue(r)
				}
				for i := range b {
					b[i] = rowsTestValue(r)
				}
				am, bm := RowMajor(a, 0, tc.k), RowMajor(b, 0, tc.n)
				if aT {
					am = RowMajor(a, 0, tc.m).T()
				}
				if bT {
					bm = RowMajor(b, 0, tc.k).T()
				}
				want := make([]float32, tc.m*tc.n)
				for i := range want {
					want[i] = 7 // Sgemm must overwrite C
				}
				Sgemm(tc.m, tc.n, tc.k, am, bm, want, 0, tc.n, 1)
				got := make([]float32, tc.m*tc.n)
				next := 0
				what := fmt.Sprintf("%+v aT=%v bT=%v", tc, aT, bT)
				SgemmRows(tc.m, tc.n, tc.k, am, bm, func(i0, i1 int, rows []float32) {
					if i0 != next || i1 <= i0 || i1 > tc.m || len(rows) != (i1-i0)*tc.n {
						t.Fatalf("%s: block [%d, %d) of %d values after row %d", what, i0, i1, len(rows), next)
					}
					copy(got[i0*tc.n:], rows)
					next = i1
				})
				if next != tc.m {
					t.Fatalf("%s: rows handed over up to %d of %d", what, next, tc.m)
				}
				sameRows(t, what, got, want)
				// The same with A made a block at a time.
				got, next = make([]float32, tc.m*tc.n), 0
				SgemmRowsFrom(tc.m, tc.n, tc.k, func(i0, i1 int, blk []float32) {
					if i0 != next || len(blk) != (i1-i0)*tc.k {
						t.Fatalf("%s: A's block [%d, %d) of %d values after row %d", what, i0, i1, len(blk), next)
					}
					for i := i0; i < i1; i++ {
						for p := range tc.k {
							blk[(i-i0)*tc.k+p] = am.Data[am.Offset+i*am.RowStride+p*am.ColStride]
						}
					}
				}, bm, func(i0, i1 int, rows []float32) {
					copy(got[i0*tc.n:], rows)
					next = i1
				})
				if next != tc.m {
					t.Fatalf("%s: SgemmRowsFrom handed over rows up to %d of %d", what, next, tc.m)
				}
				sameRows(t, what+" (A filled by blocks)", got, want)
			}
		}
	}
}

// sameRows fails t at the first element of got whose bits differ from want's.
func sameRows(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: element %d is %v, Sgemm gives %v", what, i, got[i], want[i])
		}
	}
}

// rowsTestValue is a normal value, or now and then an infinity, a NaN or a signed zero.
func rowsTestValue(r *rand.Rand) float32 {
	switch r.IntN(200) {
	case 0:
		return float32(math.Inf(1 - 2*r.IntN(2)))
	case 1:
		return float32(math.NaN())
	case 2:
		return float32(math.Copysign(0, -1))
	}
	return float32(r.NormFloat64())
}
