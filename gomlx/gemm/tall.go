package gemm

import "sync"

// tallRows is the height of the tall kernels' tile (kernelTall; one variant takes one more
// row, so that a layer with 25 weights per output, a 5×5 kernel over one channel, is one
// tile).
const tallRows = 24

// tallMinK is the shortest reduction the tall path takes: its tiles load and store C once per
// kc block, which a short reduction (a dense layer's weight gradient over a batch) does not
// repay. A product's bits do not depend on the path.
const tallMinK = kc

// tallMaxN is the widest B the tall path takes: its tiles read B's rows in place, every
// tile all of a kc block of them, which stays fast while that block (kc·n values) fits the
// level-1 cache. Measured (BenchmarkTallShapes, Intel Xeon with AVX-512): ahead or even at
// n = 32 and 64 (cnn4's convolutions, ResNet-18's first stage; idle), behind the packed 6-row
// path at n = 256 and 512 (ResNet-18's third and fourth stages: 90–95 against 105–113 GFLOP/s,
// with a training run on the other core).
const tallMaxN = 64

// tallProducts enables the tall path (a variable so tests can compare both paths).
var tallProducts = true

// tallFits reports whether Sgemm computes an m×n×k product of a and b with the tall kernels:
// A stored by columns and B by rows, both read in place (a weight gradient Xᵀ·dZ, whose
// X is the layer's input as the forward product read it), at least one full tile of
// tallRows rows and nr columns, a long enough reduction, and a product sgemm would not
// swap: the elements a tall tile computes are then exactly those sgemm computes with its
// full 6-row panels, plus (in a 25-row tile) its ragged last row, and the tall kernels add
// each into C in the order sgemm's path for it does, so that even a NaN in both C and the
// block's sum keeps the payload it had before the tall path existed.
//
// Rows left over (beyond the 25th of a last tile) cost a second pass over all of B on the
// 6-row path, so they must be few: at most m/32 (BenchmarkTallShapes: FedAvg-CNN's first
// weight gradient on 32×32×3, m = 75 with 3 left over, ran at 72–75 GFLOP/s on the tall path
// against 84–89 without it, with a training run on the other core; idle, cnn4's and
// FedAvg-CNN's second, m = 800 with 8 left over, ran at 94–117 against 98–107 and 68–90
// against 79–83: no loss, so they stay on it).
func tallFits(m, n, k int, a, b Matrix) bool {
	left := m % tallRows
	return tallProducts && hasTallKernel() && a.RowStride == 1 && b.ColStride == 1 &&
		m >= tallRows && m <= tallMaxM() && (left <= 1 || 32*left <= m) &&
		n >= nr && n <= tallMaxN && k >= tallMinK && !(swapOperands && (alwaysSwap || swapPays(m, n, k, a, b)))
}

// sgemmTall computes C = A·B with the tall kernels on the rows of its full tiles and the
// columns of its full nr-column panels, and with sgemm on the rows and columns left over,
// unswapped as the whole product would be (see tallFits): mt is a multiple of mr or the
// whole of m, so sgemm's ragged rows and columns are the whole product's, and every element
// is added into C with the operand order that path gives it.
// The tiles run kc block by kc block (accumulating from the second on), each element's
// operations those of every other path, so the result does not depend on the split; the
// work items (tile, panel) are divided among workers in contiguous runs, so a worker's
// consecutive items share the tile of A it has in cache.
func sgemmTall(m, n, k int, a, b Matrix, c []float32, cOff, ldc, workers int) {
	tiles, panels := m/tallRows, n/nr
	lastRows := tallRows
	if m%tallRows == 1 {
		lastRows++ // A single row left over joins the last tile.
	}
	mt, nt := (tiles-1)*tallRows+lastRows, panels*nr
	items := tiles * panels
	run := func(lo, hi int) {
		for p0 := 0; p0 < k; p0 += kc {
			kb := min(kc, k-p0)
			for it := lo; it < hi; it++ {
				t, q := it/panels, it%panels
				rows := tallRows
				if t == tiles-1 {
					rows = lastRows
				}
				i0, j0 := t*tallRows, q*nr
				kernelTall(rows, kb, a.Data[a.Offset+i0+p0*a.ColStride:], a.ColStride,
					b.Data[b.Offset+p0*b.RowStride+j0:], b.RowStride, c[cOff+i0*ldc+j0:], ldc, p0 > 0)
			}
		}
	}
	workers = min(workers, items)
	if workers <= 1 || m*n*k < minParallelFlops {
		run(0, items)
	} else {
		var wg sync.WaitGroup
		wg.Add(workers - 1)
		for w := 1; w < workers; w++ {
			go func() {
				defer wg.Done()
				run(w*items/workers, (w+1)*items/workers)
			}()
		}
		run(0, items/workers)
		wg.Wait()
	}
	if mt < m { // The rows no tile covers, across all columns.
		rest := a
		rest.Offset += mt * a.RowStride
		sgemm(m-mt, n, k, rest, b, c, cOff+mt*ldc, ldc, workers)
	}
	if nt < n { // The columns no panel covers, on the tiles' rows.
		rest := b
		rest.Offset += nt * b.ColStride
		sgemm(mt, n-nt, k, a, rest, c, cOff+nt, ldc, workers)
	}
}
