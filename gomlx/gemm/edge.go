package gemm

// The ragged edges of a product: the last rows of A that do not fill an mr-row panel. A
// weight gradient's product has few rows (cnn4's first convolution: 25 = 4·6 + 1, over a
// reduction of 18,432), so its one ragged row is a fifth of the work and was packed and
// multiplied at a far lower rate than the full panels. With fastEdges, such a panel is
// packed by packEdge, at its first use (after the full panels' kernels have brought the
// block of A into cache) rather than before them, and multiplied by wideEdge where the
// AVX-512 kernel runs. This changes only how values are moved, never an operation on them:
// fastEdges off runs the general code, for tests to compare.

// fastEdges enables packEdge and wideEdge (a variable so tests can compare both paths).
var fastEdges = true

// packEdge is packA for a last panel of rows < mr rows starting at base: dst[p*mr + r] =
// A[r, p] for r < rows, zero for the rows past A, p in [0, kb). It zeroes the panel in one
// pass and then copies the rows without a test per element: by columns when A is stored by
// columns (each column's rows are adjacent), else row by row.
func packEdge(dst []float32, a Matrix, base, rows, kb int) {
	dst = dst[:kb*mr]
	clear(dst)
	if a.RowStride == 1 {
		for p := range kb {
			o := base + p*a.ColStride
			src := a.Data[o : o+rows]
			d := dst[p*mr : p*mr+rows]
			for r, v := range src {
				d[r] = v
			}
		}
		return
	}
	for r := range rows {
		o := base + r*a.RowStride
		if a.ColStride == 1 {
			for p, v := range a.Data[o : o+kb] {
				dst[p*mr+r] = v
			}
			continue
		}
		for p := range kb {
			dst[p*mr+r] = a.Data[o+p*a.ColStride]
		}
	}
}

// wideEdge computes, with the AVX-512 kernel, the ragged last rows [ir, mb) of work item
// rows i0… against two full B panels (bp, at column jc of C): one 6×32 kernel call into
// w.wideTile, whose valid rows are then stored or added into C, instead of two 6×16 calls
// into w.tile. The wide kernel computes every element as the 6×16 one does (see
// kernel6x32AVX512Rows) and the stores and sums are the same, so C gets the same bits.
// The ragged panel of A is packed in w.pa: at 0 when A is read in place (direct), else at
// panel ir/mr.
func (p *problem) wideEdge(w *workspace, direct bool, i0, ir, mb, kb, jc int, bp []float32, accumulate bool) {
	a := w.pa
	if !direct {
		a = w.pa[(ir/mr)*kb*mr:]
	}
	kernelWide(kb, a, bp, w.wideTile[:], 2*nr, false)
	cIdx := p.cOff + (i0+ir)*p.ldc + jc
	for i := range mb - ir {
		row := p.c[cIdx+i*p.ldc : cIdx+i*p.ldc+2*nr]
		t := w.wideTile[i*2*nr : i*2*nr+2*nr]
		if accumulate {
			for j := range row {
				row[j] += t[j]
			}
		} else {
			copy(row, t)
		}
	}
}
