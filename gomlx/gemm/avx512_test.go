//go:build amd64

package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// needAVX512 skips a test where the AVX-512 kernels cannot run (and so cannot differ).
func needAVX512(t *testing.T) {
	t.Helper()
	if !useAVX2 || !hasAVX512 {
		t.Skip("this CPU lacks AVX-512F (or $FEDPIPE_GEMM_GENERIC=1): the AVX2 or generic kernel is the only one, nothing to compare")
	}
}

// withISA runs f with the kernels of isa selected, restoring the choice after.
func withISA(t *testing.T, isa string, f func()) {
	t.Helper()
	was := useAVX512
	defer func() { useAVX512 = was }()
	if err := SetKernelISA(isa); err != nil {
		t.Fatal(err)
	}
	f()
}

// specialValue returns one of the values where float32 arithmetic has its corner cases: NaNs
// with random payloads and signs (quiet and signalling), infinities, signed zeros,
// subnormals, the largest finite values (products overflow) and the smallest normals (they
// underflow).
func specialValue(r *rand.Rand) float32 {
	sign := uint32(r.IntN(2)) << 31
	switch r.IntN(7) {
	case 0:
		return math.Float32frombits(sign | 0x7f800000 | (1 + r.Uint32N(0x7fffff))) // NaN
	case 1:
		return math.Float32frombits(sign | 0x7f800000) // ±Inf
	case 2:
		return math.Float32frombits(sign) // ±0
	case 3:
		return math.Float32frombits(sign | (1 + r.Uint32N(0x7fffff))) // subnormal
	case 4:
		return math.Float32frombits(sign | 0x7f7fffff - r.Uint32N(1<<20)) // near MaxFloat32
	case 5:
		return math.Float32frombits(sign | 0x00800000 + r.Uint32N(1<<20)) // near the smallest normal
	}
	return math.Float32frombits(sign | 0x3f800000 + r.Uint32N(0x7fffff)) // [1, 2)
}

// fill sets data to random normal values, a fraction special of them special values.
func fill(r *rand.Rand, data []float32, special float64) {
	for i := range data {
		if r.Float64() < special {
			data[i] = specialValue(r)
		} else {
			data[i] = float32(r.NormFloat64())
		}
	}
}

// sameBits fails t at the first element where got and want differ in any bit.
func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: element %d is %v (%#08x), the reference gives %v (%#08x)", what, i,
				got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// TestAVX512MicroKernelsMatchAVX2 calls the AVX-512 micro-kernel (6×32, twice: four panels)
// and the AVX2 kernel (four times) on the same operands (packed A, A by rows, A by columns with a larger stride;
// every k up to past one kc block; C stored or accumulated into; rows of C further apart than
// the tile) and requires the same bits in all of C, with NaNs, infinities, signed zeros,
// subnormals and overflowing products among the operands and in C.
func TestAVX512MicroKernelsMatchAVX2(t *testing.T) {
	needAVX512(t)
	r := rand.New(rand.NewPCG(33, 512))
	type kern func(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)
	ks := []int{0}
	for k := 1; k <= 40; k++ {
		ks = append(ks, k)
	}
	ks = append(ks, 63, 64, 65, 127, 255, kc)
	for _, special := range []float64{0, 0.02, 0.3} {
		for _, k := range ks {
			for _, mode := range []string{"packed", "rows", "cols"} {
				for _, acc := range []bool{false, true} {
					lda, aLen := mr, max(k, 1)*mr
					avx2, wide := kern(kernel6x16AVX2Cols), kern(kernel6x32AVX512Cols)
					switch mode {
					case "rows":
						lda = k + 3
						aLen = mr * lda
						avx2, wide = kernel6x16AVX2Rows, kernel6x32AVX512Rows
					case "cols":
						lda = mr + 5
						aLen = max(k, 1) * lda
					}
					a := make([]float32, aLen)
					b := make([]float32, max(k, 1)*4*nr)
					fill(r, a, special)
					fill(r, b, special)
					ldc := 4*nr + 3
					c0 := make([]float32, mr*ldc)
					fill(r, c0, special)
					want := append([]float32(nil), c0...)
					for q := range 4 {
						avx2(k, &a[0], lda, &b[q*k*nr:][0], &want[q*nr], ldc, acc)
					}
					what := fmt.Sprintf("special=%g k=%d %s accumulate=%v", special, k, mode, acc)

					got := append([]float32(nil), c0...)
					wide(k, &a[0], lda, &b[0], &got[0], ldc, acc)
					wide(k, &a[0], lda, &b[2*k*nr:][0], &got[2*nr], ldc, acc)
					sameBits(t, "6×32 "+what, got, want)
				}
			}
		}
	}
}

// TestSgemmAVX512MatchesAVX2 runs whole products with the AVX-512 kernels and with the AVX2
// ones and requires the same bits in all of C (the padding too): every ragged edge of the
// 6×16 and 6×32 tiles (m and n from 1 to a few tiles plus remainders), k across kc blocks
// (so C is accumulated into), transposed and strided operands, one and two workers, A packed
// or read in place, B packed per item or once, products swapped or not.
func TestSgemmAVX512MatchesAVX2(t *testing.T) {
	needAVX512(t)
	r := rand.New(rand.NewPCG(33, 33))
	defer func() { inPlaceA, prepackB, swapOperands, alwaysSwap = true, true, true, false }()
	ms := []int{1, 2, 5, 6, 7, 11, 12, 13, 17, 18, 19, 36, 97}
	ns := []int{1, 2, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 80, 95, 96, 97, 111, 112, 113, 127, 128, 129, 160}
	var cases []gemmCase
	for _, m := range ms {
		for _, n := range ns {
			k := []int{1, 3, 25, 257}[r.IntN(4)]
			cases = append(cases, gemmCase{m: m, n: n, k: k, transA: r.IntN(2) == 0, transB: r.IntN(2) == 0, pad: r.IntN(3)})
		}
	}
	cases = append(cases, gemmCase{m: 97, n: 65, k: 600, pad: 1}, gemmCase{m: 13, n: 49, k: 513, transA: true, transB: true},
		gemmCase{m: 200, n: 300, k: 300, transB: true}, gemmCase{m: 32, n: 512, k: 300}, gemmCase{m: 25, n: 32, k: 1000, transA: true})
	for i, tc := range cases {
		special := []float64{0, 0.01, 0.2, 0.6}[i%4]
		a, b := tc.matrices(r, special)
		workers := 1 + i%2
		inPlaceA, prepackB = i%3 != 1, i%4 != 2
		swapOperands, alwaysSwap = i%5 != 3, i%7 == 4
		var want, got []float32
		withISA(t, "avx2", func() { want = tc.run(a, b, workers) })
		withISA(t, "avx512", func() { got = tc.run(a, b, workers) })
		sameBits(t, fmt.Sprintf("%+v special=%g workers=%d inPlaceA=%v prepackB=%v swap=%v/%v",
			tc, special, workers, inPlaceA, prepackB, swapOperands, alwaysSwap), got, want)
	}
}

// matrices returns random operands for tc, a fraction special of their values special (see
// specialValue), stored as operands stores them.
func (tc gemmCase) matrices(r *rand.Rand, special float64) (a, b Matrix) {
	mk := func(rows, cols int, trans bool) Matrix {
		data := make([]float32, rows*cols+2*tc.pad)
		fill(r, data, special)
		if trans {
			return Matrix{Data: data, Offset: tc.pad, RowStride: 1, ColStride: rows}
		}
		return Matrix{Data: data, Offset: tc.pad, RowStride: cols, ColStride: 1}
	}
	return mk(tc.m, tc.k, tc.transA), mk(tc.k, tc.n, tc.transB)
}

// TestKernelISA checks the display name, the identity and switching between the ISAs.
func TestKernelISA(t *testing.T) {
	if Kernel() != "avx2fma" && Kernel() != "generic" {
		t.Fatalf("Kernel() = %q", Kernel())
	}
	for _, isa := range KernelISAs() {
		withISA(t, isa, func() {
			if KernelISA() != isa {
				t.Errorf("after SetKernelISA(%q): KernelISA() = %q", isa, KernelISA())
			}
			if isa != "generic" && Kernel() != "avx2fma" {
				t.Errorf("ISA %s: Kernel() = %q, want avx2fma (the identity of results)", isa, Kernel())
			}
		})
	}
	if err := SetKernelISA("sse"); err == nil {
		t.Error("SetKernelISA(sse) accepted")
	}
}
