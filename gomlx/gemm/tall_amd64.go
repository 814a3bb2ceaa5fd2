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

// kernel12x8AVX2Tall is kernel24x16AVX512Tall's AVX2 counterpart over a 12×8 tile.
//
//go:noescape
func kernel12x8AVX2Tall(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, accumulate bool)

// kernel13x8AVX2Tall is kernel12x8AVX2Tall over 13 rows, the last added into C as the 6-row
// path adds its ragged edge (see kernel25x16AVX512Tall).
//
//go:noescape
func kernel13x8AVX2Tall(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, accumulate bool)

// hasTallKernel reports whether kernelTall may run: the assembly kernels are in use.
func hasTallKernel() bool { return useAVX2 }

// tallMaxM is the most rows of C the tall path takes: any number with the AVX-512 kernels;
// one tile (24 or 25 rows) with the AVX2 ones, which are ahead there and behind the 6-row
// path on more rows (BenchmarkTallShapes with $FEDPIPE_KERNEL=avx2 on an Intel Xeon: conv1's
// weight gradient 58–60 against 36–40 GFLOP/s; conv2's 52–55 against 64–72, ResNet-18's first
// stage 43–46 against 49–50).
func tallMaxM() int {
	if useAVX512 {
		return 1 << 62
	}
	return tallRows + 1
}

// kernelTall runs the tall kernels on a tile of rows (24 or 25) rows and 16 columns of C,
// reading a, b and c as kernel24x16AVX512Tall does: that kernel (or its 25-row variant) with
// AVX-512, else four AVX2 kernels (two 8-column halves of 12 rows, then of 12 or 13); only
// when hasTallKernel.
func kernelTall(rows, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool) {
	_ = a[(k-1)*lda+rows-1]
	_ = b[(k-1)*ldb+nr-1]
	_ = c[(rows-1)*ldc+nr-1]
	if !useAVX512 {
		for j := 0; j < nr; j += 8 {
			kernel12x8AVX2Tall(k, &a[0], lda, &b[j], ldb, &c[j], ldc, accumulate)
			if rows == tallRows+1 {
				kernel13x8AVX2Tall(k, &a[12], lda, &b[j], ldb, &c[12*ldc+j], ldc, accumulate)
			} else {
				kernel12x8AVX2Tall(k, &a[12], lda, &b[j], ldb, &c[12*ldc+j], ldc, accumulate)
			}
		}
		return
	}
	if rows == tallRows+1 {
		kernel25x16AVX512Tall(k, &a[0], lda, &b[0], ldb, &c[0], ldc, accumulate)
		return
	}
	kernel24x16AVX512Tall(k, &a[0], lda, &b[0], ldb, &c[0], ldc, accumulate)
}
