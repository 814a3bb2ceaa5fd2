package gemm

// kernel24x16AVX512Tall computes a 24×16 tile of C (rows c[i*ldc:], 16 values each) from A
// read by columns (A[i, p] at a[p*lda+i]) and B read by rows (B[p, j] at b[p*ldb+j]) over k
// steps; each element as kernel6x16AVX2Cols computes it (see tall_amd64.s); lda, ldb and
// ldc are in elements.
//
//go:noescape
func kernel24x16AVX512Tall(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, accumulate bool)

// kernel25x16AVX512Tall is kernel24x16AVX512Tall over 25 rows.
//
//go:noescape
func kernel25x16AVX512Tall(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, accumulate bool)

// hasTallKernel reports whether kernelTall may run: the AVX-512 kernels are in use.
func hasTallKernel() bool { return useAVX512 }

// kernelTall runs the tall kernel of rows (24 or 25) rows on a, b and c as
// kernel24x16AVX512Tall reads them; only when hasTallKernel.
func kernelTall(rows, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	_ = a[(k-1)*lda+rows-1]
	_ = b[(k-1)*ldb+nr-1]
	_ = c[(rows-1)*ldc+nr-1]
	if rows == tallRows+1 {
		kernel25x16AVX512Tall(k, &a[0], lda, &b[0], ldb, &c[0], ldc, accumulate)
		return
	}
	kernel24x16AVX512Tall(k, &a[0], lda, &b[0], ldb, &c[0], ldc, accumulate)
}
