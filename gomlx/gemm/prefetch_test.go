//go:build amd64

package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestColsKernelsMatchRows checks the kernels that read A by columns, whose loop prefetches
// A's columns ahead where they lie far apart, against the kernels that read A by rows (no
// prefetching), on the same A stored both ways: the same bits in all of C, for every k up
// to past 64 (where prefetching starts) and up to kc, columns of A close (the prefetchers
// follow; no prefetch) and over 2 KiB apart (prefetched), C stored or accumulated into,
// with NaNs, infinities, signed zeros, subnormals and overflowing products among the
// values; on the AVX2 kernels and the AVX-512 ones (skipped, saying so, where the CPU has
// none).
func TestColsKernelsMatchRows(t *testing.T) {
	type kern func(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)
	isas := []struct {
		name       string
		cols, rows kern
		panels     int
	}{
		{"avx2", kernel6x16AVX2Cols, kernel6x16AVX2Rows, 1},
		{"avx512", kernel6x32AVX512Cols, kernel6x32AVX512Rows, 2},
	}
	ks := []int{0, 1, 15, 16, 17, 31, 63, 64, 65, 80, 127, kc - 1, kc}
	for _, isa := range isas {
		t.Run(isa.name, func(t *testing.T) {
			switch {
			case !useAVX2:
				t.Skip("this CPU lacks AVX2 and FMA (or $FEDPIPE_GEMM_GENERIC=1): no assembly kernel to check")
			case isa.name == "avx512":
				needAVX512(t)
			}
			r := rand.New(rand.NewPCG(48, 5))
			for _, special := range []float64{0, 0.05} {
				for _, k := range ks {
					for _, ldaCols := range []int{mr, mr + 5, 600, 1031} { // 600 floats: 2,400 bytes
						for _, acc := range []bool{false, true} {
							// A is mr×k: by columns (A[i, p] at p*ldaCols+i) and by rows (A[i, p] at
							// i*ldaRows+p), the same values.
							ldaRows := k + 3
							aCols := make([]float32, max(k, 1)*ldaCols)
							aRows := make([]float32, mr*ldaRows)
							fill(r, aCols, special)
							for i := range mr {
								for p := range k {
									aRows[i*ldaRows+p] = aCols[p*ldaCols+i]
								}
							}
							n := isa.panels * nr
							b := make([]float32, max(k, 1)*n)
							fill(r, b, special)
							ldc := n + 3
							c0 := make([]float32, mr*ldc)
							fill(r, c0, special)
							want := append([]float32(nil), c0...)
							got := append([]float32(nil), c0...)
							isa.rows(k, &aRows[0], ldaRows, &b[0], &want[0], ldc, acc)
							isa.cols(k, &aCols[0], ldaCols, &b[0], &got[0], ldc, acc)
							sameBits(t, fmt.Sprintf("%s special=%g k=%d lda=%d accumulate=%v", isa.name, special, k, ldaCols, acc), got, want)
						}
					}
				}
			}
		})
	}
}
