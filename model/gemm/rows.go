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
		p.nPad = nPanels * nr
		p.packedB = getPacked(k * p.nPad)
		for p0 := 0; p0 < k; p0 += kc {
			packB(p.packedB[p0*p.nPad:], b, p0, 0, min(kc, k-p0), n)
		}
		defer putPacked(p.packedB)
	}
	w := getWorkspace()
	defer putWorkspace(w)
	for i0 := 0; i0 < m; i0 += rb {
		mb := min(rb, m-i0)
		p.m = mb
		p.a = a
		p.a.Offset += i0 * a.RowStride
		for it := range nChunks {
			p.run(it, w)
		}
		done(i0, i0+mb, buf[:mb*n])
	}
}
