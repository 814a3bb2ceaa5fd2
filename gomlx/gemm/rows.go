package gemm

// SgemmRows computes C = A·B on one goroutine a block of rows at a time, handing each block
// to done before the next is computed: done(i0, i1, rows) receives rows [i0, i1) of C as the
// row-major (i1−i0)×n matrix rows (a scratch buffer, valid only during the call), blocks in
// increasing row order. A caller can so consume C while it is in cache (an input gradient's
// col2im, say) instead of writing all of it to memory first. Each block is the work items
// Sgemm runs for those rows unswapped, with B packed once for all blocks, so its values are
// Sgemm's bits (blocking does not change any result) wherever Sgemm would take this unswapped
// path (the tall path and swapping, where Sgemm takes them, compute the same bits too).
func SgemmRows(m, n, k int, a, b Matrix, done func(i0, i1 int, rows []float32)) {
	sgemmRows(m, n, k, a, nil, b, done)
}

// SgemmRowsFrom is SgemmRows with A made a block at a time: before each block of rows
// [i0, i1), fill writes those rows of A into a, row-major with k values a row (a scratch
// buffer), so A need never exist whole (a convolution's im2col matrix, say). The values of C
// are those of Sgemm on the whole A.
func SgemmRowsFrom(m, n, k int, fill func(i0, i1 int, a []float32), b Matrix, done func(i0, i1 int, rows []float32)) {
	sgemmRows(m, n, k, Matrix{}, fill, b, done)
}

// sgemmRows is SgemmRows, with A from fill when fill is set.
func sgemmRows(m, n, k int, a Matrix, fill func(i0, i1 int, a []float32), b Matrix, done func(i0, i1 int, rows []float32)) {
	if m <= 0 || n <= 0 {
		return
	}
	rb := mc
	buf := getPacked(min(rb, m) * n)
	defer putPacked(buf)
	if k <= 0 {
		for i0 := 0; i0 < m; i0 += rb {
			mb := min(rb, m-i0)
			clear(buf[:mb*n])
			done(i0, i0+mb, buf[:mb*n])
		}
		return
	}
	nPanels := (n + nr - 1) / nr
	chunk := min(nPanels, nc/nr)
	nChunks := (nPanels + chunk - 1) / chunk
	p := &problem{n: n, k: k, b: b, c: buf, ldc: n, rb: rb, chunk: chunk * nr, nChunks: nChunks}
	if m > rb && prepackB {
		defer p.packAllB()()
	}
	w := getWorkspace()
	defer putWorkspace(w)
	var ablock []float32
	if fill != nil {
		ablock = getPacked(min(rb, m) * k)
		defer putPacked(ablock)
	}
	for i0 := 0; i0 < m; i0 += rb {
		mb := min(rb, m-i0)
		p.m = mb
		if fill != nil {
			fill(i0, i0+mb, ablock[:mb*k])
			p.a = RowMajor(ablock, 0, k)
		} else {
			p.a = a
			p.a.Offset += i0 * a.RowStride
		}
		for it := range nChunks {
			p.run(it, w)
		}
		done(i0, i0+mb, buf[:mb*n])
	}
}
