package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// gemmCase is one product; transA/transB choose column-major (transposed) storage, and
// pad adds unused elements around the operands and the output to test offsets and strides.
type gemmCase struct {
	m, n, k        int
	transA, transB bool
	pad            int
}

// operands returns random A, B and their views, and the naive float64 product with the sum
// of |a·b| per element (for the rounding bound).
func (tc gemmCase) operands(r *rand.Rand) (a, b Matrix, want, mag []float64) {
	mk := func(rows, cols int, trans bool) Matrix {
		data := make([]float32, rows*cols+2*tc.pad)
		for i := range data {
			data[i] = float32(r.NormFloat64())
		}
		if trans {
			return Matrix{Data: data, Offset: tc.pad, RowStride: 1, ColStride: rows}
		}
		return Matrix{Data: data, Offset: tc.pad, RowStride: cols, ColStride: 1}
	}
	a, b = mk(tc.m, tc.k, tc.transA), mk(tc.k, tc.n, tc.transB)
	at := func(x Matrix, i, j int) float64 { return float64(x.Data[x.Offset+i*x.RowStride+j*x.ColStride]) }
	want, mag = make([]float64, tc.m*tc.n), make([]float64, tc.m*tc.n)
	for i := range tc.m {
		for j := range tc.n {
			for p := range tc.k {
				v := at(a, i, p) * at(b, p, j)
				want[i*tc.n+j] += v
				mag[i*tc.n+j] += math.Abs(v)
			}
		}
	}
	return a, b, want, mag
}

// run computes the product with the given workers into a padded output (ldc = n + pad).
func (tc gemmCase) run(a, b Matrix, workers int) []float32 {
	ldc := tc.n + tc.pad
	c := make([]float32, tc.pad+tc.m*ldc)
	for i := range c {
		c[i] = float32(math.NaN()) // Must be overwritten (or left alone outside the output).
	}
	Sgemm(tc.m, tc.n, tc.k, a, b, c, tc.pad, ldc, workers)
	return c
}

func (tc gemmCase) check(t *testing.T, c []float32, want, mag []float64) {
	t.Helper()
	ldc := tc.n + tc.pad
	// Blocked summation: at most kc products summed per block, then one add per block.
	bound := float64(kc+tc.k/kc+2) * 0x1p-24
	for i := range tc.m {
		for j := range tc.n {
			got := float64(c[tc.pad+i*ldc+j])
			w := want[i*tc.n+j]
			if math.IsNaN(got) || math.Abs(got-w) > bound*mag[i*tc.n+j]+1e-30 {
				t.Fatalf("%+v: C[%d,%d] = %v, want %v (tolerance %g)", tc, i, j, got, w, bound*mag[i*tc.n+j])
			}
		}
		for j := tc.n; j < ldc && i < tc.m-1; j++ { // Padding between rows untouched.
			if !math.IsNaN(float64(c[tc.pad+i*ldc+j])) {
				t.Fatalf("%+v: wrote outside the output at row %d, column %d", tc, i, j)
			}
		}
	}
}

func testCases(r *rand.Rand) []gemmCase {
	cases := []gemmCase{
		{m: 1, n: 1, k: 1}, {m: 6, n: 16, k: 1}, {m: 7, n: 17, k: 1, pad: 3},
		{m: 5, n: 3, k: 2, transA: true}, {m: 13, n: 33, k: 300, transB: true, pad: 5},
		{m: 96, n: 256, k: 256}, {m: 97, n: 257, k: 257, transA: true, transB: true, pad: 1},
		{m: 25, n: 32, k: 4608, transA: true}, // Weight gradient: tiny output, long reduction.
		{m: 1152, n: 32, k: 25},               // First convolution: long and thin.
		{m: 512, n: 64, k: 800, transB: true}, // Second convolution's input gradient shape.
		{m: 32, n: 512, k: 1024},              // Dense layer.
		{m: 200, n: 300, k: 700, pad: 2},      // Several blocks in every direction.
		{m: 32, n: 10, k: 512, transB: true},
	}
	for range 25 {
		cases = append(cases, gemmCase{m: 1 + r.IntN(70), n: 1 + r.IntN(70), k: 1 + r.IntN(600),
			transA: r.IntN(2) == 0, transB: r.IntN(2) == 0, pad: r.IntN(3)})
	}
	return cases
}

func TestSgemmAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range testCases(r) {
		a, b, want, mag := tc.operands(r)
		tc.check(t, tc.run(a, b, 2), want, mag)
	}
}

// TestSgemmGenericKernel runs the pure-Go kernel (the fallback) against the naive product.
func TestSgemmGenericKernel(t *testing.T) {
	if !useAVX2 {
		t.Skip("the generic kernel is already the one in use")
	}
	useAVX2 = false
	defer func() { useAVX2 = true }()
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range testCases(r)[:12] {
		a, b, want, mag := tc.operands(r)
		tc.check(t, tc.run(a, b, 2), want, mag)
	}
}

// TestSgemmDeterministic checks that results are bit-identical for any number of workers.
func TestSgemmDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range testCases(r) {
		a, b, _, _ := tc.operands(r)
		ref := tc.run(a, b, 1)
		for _, w := range []int{2, 3, 8} {
			got := tc.run(a, b, w)
			for i := range ref {
				if math.Float32bits(got[i]) != math.Float32bits(ref[i]) {
					t.Fatalf("%+v: workers=%d differs from workers=1 at %d: %v vs %v", tc, w, i, got[i], ref[i])
				}
			}
		}
	}
}

// TestSgemmPrepackedB checks that packing B once per product (shared by the row blocks)
// gives the same bits as packing it in every work item.
func TestSgemmPrepackedB(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, tc := range append(testCases(r), gemmCase{m: 2048, n: 64, k: 800}, gemmCase{m: 800, n: 64, k: 2048, transA: true}) {
		a, b, _, _ := tc.operands(r)
		prepackB = false
		ref := tc.run(a, b, 2)
		prepackB = true
		got := tc.run(a, b, 2)
		for i := range ref {
			if math.Float32bits(got[i]) != math.Float32bits(ref[i]) {
				t.Fatalf("%+v: pre-packed B differs at %d: %v vs %v", tc, i, got[i], ref[i])
			}
		}
	}
}

// TestSgemmInPlaceA checks that reading row-major A in place gives the same bits as packing
// it, on one and several workers, ragged panels and offsets included.
func TestSgemmInPlaceA(t *testing.T) {
	if !hasRowsKernel() {
		t.Skip("no in-place kernel on this CPU")
	}
	r := rand.New(rand.NewPCG(11, 12))
	defer func() { inPlaceA = true }()
	for _, tc := range append(testCases(r), gemmCase{m: 2048, n: 64, k: 800}, gemmCase{m: 2048, n: 800, k: 64, pad: 1}, gemmCase{m: 18431, n: 32, k: 25}) {
		a, b, want, mag := tc.operands(r)
		for _, w := range []int{1, 3} {
			inPlaceA = false
			ref := tc.run(a, b, w)
			inPlaceA = true
			got := tc.run(a, b, w)
			for i := range ref {
				if math.Float32bits(got[i]) != math.Float32bits(ref[i]) {
					t.Fatalf("%+v workers=%d: A in place differs from packed A at %d: %v vs %v", tc, w, i, got[i], ref[i])
				}
			}
			tc.check(t, got, want, mag)
		}
	}
}

// TestSgemmSwapped: computing Cᵀ = Bᵀ·Aᵀ and transposing gives C bit for bit, for the
// products where Sgemm does so (the dense layer's at batch 32) and for others.
func TestSgemmSwapped(t *testing.T) {
	if !hasRowsKernel() {
		t.Skip("no in-place kernel on this CPU: nothing is swapped")
	}
	r := rand.New(rand.NewPCG(13, 14))
	defer func() { swapOperands, alwaysSwap = true, false }()
	swappedCases := []gemmCase{{m: 32, n: 512, k: 1024}, {m: 32, n: 1024, k: 512, transB: true, pad: 2}, {m: 7, n: 301, k: 300}}
	for _, tc := range swappedCases {
		a, b, _, _ := tc.operands(r)
		if !swapPays(tc.m, tc.n, tc.k, a, b) {
			t.Errorf("%+v: not swapped", tc)
		}
	}
	cases := append(testCases(r), gemmCase{m: 25, n: 32, k: 2000, transA: true, pad: 1})
	for _, tc := range append(cases, swappedCases...) {
		a, b, want, mag := tc.operands(r)
		for _, w := range []int{1, 3} {
			swapOperands = false
			ref := tc.run(a, b, w)
			swapOperands, alwaysSwap = true, true
			got := tc.run(a, b, w)
			alwaysSwap = false
			for i := range ref {
				if math.Float32bits(got[i]) != math.Float32bits(ref[i]) {
					t.Fatalf("%+v workers=%d: swapped differs at %d: %v vs %v", tc, w, i, got[i], ref[i])
				}
			}
			tc.check(t, got, want, mag)
		}
	}
}

func TestSgemmZeroK(t *testing.T) {
	c := []float32{1, 2, 3, 4}
	Sgemm(2, 2, 0, Matrix{}, Matrix{}, c, 0, 2, 1)
	for i, v := range c {
		if v != 0 {
			t.Fatalf("c[%d] = %v, want 0", i, v)
		}
	}
}

func BenchmarkSgemm(b *testing.B) {
	for _, s := range [][3]int{{1024, 1024, 1024}, {18432, 32, 25}, {2048, 64, 800}, {25, 32, 18432}, {800, 64, 2048}, {2048, 800, 64}} {
		m, n, k := s[0], s[1], s[2]
		b.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(b *testing.B) {
			r := rand.New(rand.NewPCG(7, 8))
			a := make([]float32, m*k)
			bb := make([]float32, k*n)
			for i := range a {
				a[i] = float32(r.NormFloat64())
			}
			for i := range bb {
				bb[i] = float32(r.NormFloat64())
			}
			c := make([]float32, m*n)
			for b.Loop() {
				Sgemm(m, n, k, RowMajor(a, 0, k), RowMajor(bb, 0, n), c, 0, n, 0)
			}
			b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// TestSplit checks that split returns valid blockings and, for a short wide-K product
// (a weight gradient), splits rows between the workers rather than repacking A per column.
func TestSplit(t *testing.T) {
	for _, c := range [][3]int{{1, 1, 2}, {5, 3, 2}, {75, 32, 2}, {95, 800, 4}, {30, 1000, 16}} {
		rows, panels := split(c[0], c[1], c[2])
		if rows < mr || rows > mc || rows%mr != 0 || panels < 1 || panels > nc/nr {
			t.Errorf("split(%v) = %d rows, %d panels", c, rows, panels)
		}
	}
	if rows, panels := split(75, 32, 2); (75+rows-1)/rows != 2 || panels != 2 {
		t.Errorf("split(75, 32, 2) = %d rows, %d panels; want 2 row blocks of all 2 panels", rows, panels)
	}
}
