// Package gemm is fedpipe's single-precision matrix multiplication: a cache-blocked GEMM
// (BLIS-style packing of A and B into micro-panels) whose inner 6×16 micro-kernel is written
// in Go assembly for amd64 CPUs with AVX2 and FMA, with a pure-Go kernel elsewhere. CPUs with
// AVX-512 compute two 6×16 tiles at once with 512-bit registers where two full B panels
// remain, with the AVX2 kernels' results bit for bit (see KernelISA; $FEDPIPE_KERNEL=avx2 forces
// the AVX2 ones).
//
// Results are deterministic and independent of the number of workers: the work is split over
// blocks of output elements, never over the reduction axis, and every output element is
// computed by the same sequence of floating-point operations (the reduction axis is cut into
// fixed KC-sized blocks; within a block the products are accumulated in order starting from
// zero, and block sums are added to the output in order). Which kernel runs (see Kernel) does
// change the rounding, since the assembly kernel uses fused multiply-adds.
package gemm

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// Blocking parameters. KC is part of the numeric definition (it fixes the order in which
// partial sums are combined); MC and NC only affect speed.
const (
	mr = 6   // Rows of the micro-kernel tile.
	nr = 16  // Columns of the micro-kernel tile.
	kc = 256 // Reduction block.
	mc = 96  // Rows of A packed at once (a multiple of mr).
	nc = 256 // Maximum columns per work item (a multiple of nr).
)

// Matrix is a strided view of a float32 matrix: element (i, j) is
// Data[Offset + i*RowStride + j*ColStride]. Strides may be any non-negative values, so
// transposed operands need no copy.
type Matrix struct {
	Data                 []float32
	Offset               int
	RowStride, ColStride int
}

// RowMajor returns the view of a rows×cols row-major matrix stored in data from offset.
func RowMajor(data []float32, offset, cols int) Matrix {
	return Matrix{Data: data, Offset: offset, RowStride: cols, ColStride: 1}
}

// T returns the transposed view of m.
func (m Matrix) T() Matrix {
	m.RowStride, m.ColStride = m.ColStride, m.RowStride
	return m
}

// Kernel names the micro-kernel in use: "avx2fma" or "generic". Different kernels round
// differently, so it belongs in any identity of computed results. The AVX-512 kernels are
// "avx2fma" too: they give the same bits (KernelISA tells them apart, for display).
func Kernel() string { return kernelName }

// minParallelFlops is the size (m·n·k) below which Sgemm runs on the calling goroutine only.
const minParallelFlops = 1 << 15

// packA's fast paths write mr = 6 rows explicitly.
var _ [1]struct{} = [mr - 5]struct{}{}

// Sgemm computes C = A·B for an m×k matrix A and a k×n matrix B, writing the m×n result to
// c[cOffset + i*ldc + j]. It uses up to workers goroutines (≤ 0 means GOMAXPROCS); the result
// does not depend on workers. If k = 0, C is set to zero.
func Sgemm(m, n, k int, a, b Matrix, c []float32, cOffset, ldc, workers int) {
	if m <= 0 || n <= 0 {
		return
	}
	if k <= 0 {
		for i := range m {
			clear(c[cOffset+i*ldc : cOffset+i*ldc+n])
		}
		return
	}
	_ = c[cOffset+(m-1)*ldc+n-1] // Bounds check once.
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if tallFits(m, n, k, a, b) {
		sgemmTall(m, n, k, a, b, c, cOffset, ldc, workers)
		return
	}
	if swapOperands && (alwaysSwap || swapPays(m, n, k, a, b)) {
		sgemmSwapped(m, n, k, a, b, c, cOffset, ldc, workers)
		return
	}
	sgemm(m, n, k, a, b, c, cOffset, ldc, workers)
}

// sgemmSwapped computes Cᵀ = Bᵀ·Aᵀ into a scratch n×m matrix and transposes it into C. Each
// element is the same sequence of fused multiply-adds over the same KC blocks (a·b = b·a
// exactly), so the result is sgemm's bit for bit.
func sgemmSwapped(m, n, k int, a, b Matrix, c []float32, cOffset, ldc, workers int) {
	t := getPacked(n * m)
	sgemm(n, m, k, b.T(), a.T(), t, 0, m, workers)
	for i := range m {
		row := c[cOffset+i*ldc : cOffset+i*ldc+n]
		for j := range row {
			row[j] = t[j*m+i]
		}
	}
	putPacked(t)
}

// swapOperands enables computing a product as Cᵀ = Bᵀ·Aᵀ where that copies less (see
// swapPays; a variable so tests can compare both ways).
var swapOperands = true

// alwaysSwap makes every product take the swapped path (for tests).
var alwaysSwap = false

// swapPays reports whether Cᵀ = Bᵀ·Aᵀ copies fewer values than C = A·B. B is always packed
// (k·n values) and A too unless the kernel reads it in place; swapped, Aᵀ is packed (k·m) and
// Bᵀ read in place where it can be, plus the m·n values of transposing the result. A dense
// layer's forward and input-gradient products at a small batch (m = 32 rows against a
// 1024×512 weight) pack the whole weight the first way and only the batch the second.
func swapPays(m, n, k int, a, b Matrix) bool {
	plain := k * n
	if !readsInPlace(a) {
		plain += k * m
	}
	swapped := k*m + m*n
	if !readsInPlace(b.T()) {
		swapped += k * n
	}
	return 4*swapped < 3*plain
}

// sgemm is Sgemm with workers resolved and the operands in the order given.
func sgemm(m, n, k int, a, b Matrix, c []float32, cOffset, ldc, workers int) {
	// Work items: row blocks of mc rows × column chunks of at most nc, narrowed until there
	// are enough items to keep every worker busy. Each item packs its rows of A and its
	// columns of B over all of K, so narrowing columns repacks A: when A has fewer row blocks
	// than workers, split picks smaller row blocks instead where that is cheaper. (Blocking
	// does not change any result.)
	rb := mc
	nPanels := (n + nr - 1) / nr
	chunk := min(nPanels, nc/nr)
	mBlocks := (m + mc - 1) / mc
	if mBlocks < workers {
		rb, chunk = split(m, n, workers)
		mBlocks = (m + rb - 1) / rb
	} else {
		// Not below two panels where the AVX-512 kernel takes two at once.
		minChunk := 1
		if hasWideKernel() && nPanels >= 2 {
			minChunk = 2
		}
		for mBlocks*((nPanels+chunk-1)/chunk) < 4*workers && chunk > minChunk {
			chunk = max((chunk+1)/2, minChunk)
		}
	}
	nChunks := (nPanels + chunk - 1) / chunk
	items := mBlocks * nChunks
	p := &problem{m: m, n: n, k: k, a: a, b: b, c: c, cOff: cOffset, ldc: ldc, rb: rb, chunk: chunk * nr, nChunks: nChunks}
	if mBlocks > 1 && prepackB {
		// Several row blocks would each pack the same columns of B: pack B once for all.
		defer p.packAllB()()
	}
	if workers == 1 || items == 1 || m*n*k < minParallelFlops {
		w := getWorkspace()
		for it := range items {
			p.run(it, w)
		}
		putWorkspace(w)
		return
	}
	workers = min(workers, items)
	var next atomic.Int64
	var wg sync.WaitGroup
	work := func() {
		w := getWorkspace()
		for {
			it := int(next.Add(1) - 1)
			if it >= items {
				break
			}
			p.run(it, w)
		}
		putWorkspace(w)
	}
	wg.Add(workers - 1)
	for range workers - 1 {
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}

// problem is one Sgemm call, shared by its workers.
type problem struct {
	m, n, k   int
	a, b      Matrix
	c         []float32
	cOff, ldc int
	rb        int // Rows per work item (a multiple of mr, at most mc).
	chunk     int // Columns per work item.
	nChunks   int
	// packedB, when set, holds all of B packed (each KC block as nr-column panels over all
	// nPad columns, from offset p0·nPad), shared by the work items instead of each packing
	// its own columns.
	packedB []float32
	nPad    int
}

// packAllB packs all of B into p.packedB, each KC block as nr-column panels over all nPad
// columns from offset p0·nPad, for the work items to share, and returns the function that
// gives the buffer back.
func (p *problem) packAllB() (release func()) {
	p.nPad = (p.n + nr - 1) / nr * nr
	p.packedB = getPacked(p.k * p.nPad)
	for p0 := 0; p0 < p.k; p0 += kc {
		packB(p.packedB[p0*p.nPad:], p.b, p0, 0, min(kc, p.k-p0), p.n)
	}
	return func() { putPacked(p.packedB) }
}

// directA reports whether the kernel reads A's full mr-row panels in place: A is stored by
// rows (ColStride 1) or by columns (RowStride 1) and the kernel in use can (hasRowsKernel).
// Packing A only copies, so the results are the same either way.
func (p *problem) directA() bool { return readsInPlace(p.a) }

// readsInPlace reports whether the kernel can read a as the A operand without packing it.
func readsInPlace(a Matrix) bool {
	return (a.ColStride == 1 || a.RowStride == 1) && inPlaceA && hasRowsKernel()
}

// inPlaceA enables reading A in place (a variable so tests can compare both paths).
var inPlaceA = true

// prepackB enables packing B once per product when several row blocks share it (a variable
// so tests can compare both paths; packing only copies, so results do not depend on it).
var prepackB = true

// packedPools recycle the buffers of pre-packed B operands across products (and steps),
// by size class: pool i holds buffers of 2^i values.
var packedPools [48]sync.Pool

// getPacked returns a buffer of n values (at least 1) from its size class.
func getPacked(n int) []float32 {
	class := bits.Len(uint(n - 1))
	if v, ok := packedPools[class].Get().(*[]float32); ok {
		return (*v)[:n]
	}
	return make([]float32, n, 1<<class)
}

// putPacked returns a buffer obtained from getPacked.
func putPacked(b []float32) {
	class := bits.Len(uint(cap(b) - 1))
	b = b[:cap(b)]
	packedPools[class].Put(&b)
}

// split chooses the rows per work item (a multiple of mr, at most mc) and the nr-column
// panels per item (at most nc/nr) for an m×n product on workers goroutines. Per unit of K, an
// item of r rows and c columns (averaged over the items) costs about r·c multiply-adds plus packCost·(r + c) for
// packing its rows of A and columns of B; the split minimizing the estimated time of the
// busiest worker wins (ties: the larger items).
func split(m, n, workers int) (rows, panels int) {
	const packCost = 16 // Packing one value ≈ this many vectorized multiply-adds.
	nPanels := (n + nr - 1) / nr
	bestRows, bestPanels, bestTime := mc, min(nPanels, nc/nr), -1
	for rb := mc; rb >= mr; rb -= mr {
		if rb > mr && (m+rb-1)/rb == (m+rb-mr-1)/(rb-mr) {
			continue // rb−mr gives the same number of row blocks with smaller ones.
		}
		mBlocks := (m + rb - 1) / rb
		rows := (m + mBlocks - 1) / mBlocks
		for ch := min(nPanels, nc/nr); ch >= 1; ch-- {
			nChunks := (nPanels + ch - 1) / ch
			cols := (n + nChunks - 1) / nChunks
			items := mBlocks * nChunks
			t := (items + workers - 1) / workers * (rows*cols + packCost*(rows+cols))
			if bestTime < 0 || t < bestTime {
				bestRows, bestPanels, bestTime = rb, ch, t
			}
		}
	}
	return bestRows, bestPanels
}

// workspace holds one worker's packing buffers.
type workspace struct {
	pa   []float32 // mc×kc, as mr-row micro-panels [panel][k][mr].
	pb   []float32 // kc×nc, as nr-column micro-panels [panel][k][nr].
	tile [mr * nr]float32
	// wideTile is tile for the AVX-512 kernel's two panels (see wideEdge).
	wideTile [mr * 2 * nr]float32
}

var workspacePool = sync.Pool{New: func() any {
	return &workspace{pa: make([]float32, mc*kc), pb: make([]float32, kc*nc)}
}}

func getWorkspace() *workspace  { return workspacePool.Get().(*workspace) }
func putWorkspace(w *workspace) { workspacePool.Put(w) }

// run computes work item it: rows [i0, i0+rb) × columns [j0, j0+chunk) of C, over all of K.
func (p *problem) run(it int, w *workspace) {
	wide := hasWideKernel()
	i0 := (it / p.nChunks) * p.rb
	j0 := (it % p.nChunks) * p.chunk
	mb := min(p.rb, p.m-i0)
	nb := min(p.chunk, p.n-j0)
	for p0 := 0; p0 < p.k; p0 += kc {
		kb := min(kc, p.k-p0)
		pb := w.pb
		if p.packedB != nil {
			pb = p.packedB[p0*p.nPad+(j0/nr)*kb*nr:]
		} else {
			packB(pb, p.b, p0, j0, kb, nb)
		}
		// A stored by rows or by columns feeds the kernel in place (when it can read it so),
		// with only a ragged last panel packed; otherwise A is packed.
		direct := p.directA()
		// edge packs the ragged last panel of A read in place. With fastEdges it runs at
		// the panel's first use, after the full panels' kernels have brought this block of
		// A into cache, rather than first.
		edgeDone := !direct || mb%mr == 0
		edge := func() {
			if !edgeDone {
				rem := mb % mr
				packA(w.pa, p.a, i0+mb-rem, p0, rem, kb)
				edgeDone = true
			}
		}
		if !direct {
			packA(w.pa, p.a, i0, p0, mb, kb)
		} else if !fastEdges {
			edge()
		}
		accumulate := p0 > 0
		for jr := 0; jr < nb; {
			// With the AVX-512 kernel, two full panels go at once (kernelWide): the same
			// operations for every element as two calls of the one-panel kernel. Their ragged
			// last rows, like everything else, go tile by tile below.
			irFrom, panels := 0, 1
			if wide && nb-jr >= 2*nr {
				bp := pb[(jr/nr)*kb*nr:]
				irFrom, panels = mb-mb%mr, 2
				for ir := 0; ir < irFrom; ir += mr {
					c := p.c[p.cOff+(i0+ir)*p.ldc+j0+jr:]
					switch {
					case direct && p.a.ColStride == 1:
						kernelWideRows(kb, p.a.Data[p.a.Offset+(i0+ir)*p.a.RowStride+p0:], p.a.RowStride, bp, c, p.ldc, accumulate)
					case direct:
						kernelWideCols(kb, p.a.Data[p.a.Offset+(i0+ir)+p0*p.a.ColStride:], p.a.ColStride, bp, c, p.ldc, accumulate)
					default:
						kernelWide(kb, w.pa[(ir/mr)*kb*mr:], bp, c, p.ldc, accumulate)
					}
				}
				if irFrom < mb && fastEdges {
					edge()
					p.wideEdge(w, direct, i0, irFrom, mb, kb, j0+jr, bp, accumulate)
					irFrom = mb
				}
			}
			for ; panels > 0; panels-- {
				bp := pb[(jr/nr)*kb*nr:]
				nn := min(nr, nb-jr)
				for ir := irFrom; ir < mb; ir += mr {
					mm := min(mr, mb-ir)
					cIdx := p.cOff + (i0+ir)*p.ldc + j0 + jr
					micro := func(c []float32, ldc int, acc bool) {
						switch {
						case direct && mm == mr && p.a.ColStride == 1:
							kernelRows(kb, p.a.Data[p.a.Offset+(i0+ir)*p.a.RowStride+p0:], p.a.RowStride, bp, c, ldc, acc)
						case direct && mm == mr:
							kernelCols(kb, p.a.Data[p.a.Offset+(i0+ir)+p0*p.a.ColStride:], p.a.ColStride, bp, c, ldc, acc)
						case direct:
							edge()
							kernel(kb, w.pa, bp, c, ldc, acc)
						default:
							kernel(kb, w.pa[(ir/mr)*kb*mr:], bp, c, ldc, acc)
						}
					}
					if mm == mr && nn == nr {
						micro(p.c[cIdx:], p.ldc, accumulate)
						continue
					}
					// Ragged edge: same kernel into a scratch tile, then copy the valid part.
					micro(w.tile[:], nr, false)
					for i := range mm {
						row := p.c[cIdx+i*p.ldc : cIdx+i*p.ldc+nn]
						t := w.tile[i*nr : i*nr+nn]
						if accumulate {
							for j := range row {
								row[j] += t[j]
							}
						} else {
							copy(row, t)
						}
					}
				}
				jr += nr
			}
		}
	}
}

// packA copies the mb×kb block of A at (i0, p0) into mr-row micro-panels, zero-padding the
// last panel: dst[panel*kb*mr + p*mr + r] = A[i0 + panel*mr + r, p0 + p].
func packA(dst []float32, a Matrix, i0, p0, mb, kb int) {
	for ir := 0; ir < mb; ir += mr {
		panel := dst[(ir/mr)*kb*mr : (ir/mr+1)*kb*mr]
		rows := min(mr, mb-ir)
		base := a.Offset + (i0+ir)*a.RowStride + p0*a.ColStride
		if rows == mr && a.ColStride == 1 {
			// The six rows are interleaved in one pass (mr is 6).
			rs := a.RowStride
			s0 := a.Data[base : base+kb]
			s1 := a.Data[base+rs : base+rs+kb]
			s2 := a.Data[base+2*rs : base+2*rs+kb]
			s3 := a.Data[base+3*rs : base+3*rs+kb]
			s4 := a.Data[base+4*rs : base+4*rs+kb]
			s5 := a.Data[base+5*rs : base+5*rs+kb]
			for p := range kb {
				d := panel[p*mr : p*mr+mr : p*mr+mr]
				d[0], d[1], d[2], d[3], d[4], d[5] = s0[p], s1[p], s2[p], s3[p], s4[p], s5[p]
			}
			continue
		}
		if rows < mr && fastEdges {
			packEdge(panel, a, base, rows, kb)
			continue
		}
		if rows == mr && a.RowStride == 1 {
			for p := range kb {
				o := base + p*a.ColStride
				src := a.Data[o : o+mr : o+mr]
				d := panel[p*mr : p*mr+mr : p*mr+mr]
				d[0], d[1], d[2], d[3], d[4], d[5] = src[0], src[1], src[2], src[3], src[4], src[5]
			}
			continue
		}
		for p := range kb {
			d := panel[p*mr : p*mr+mr]
			for r := range mr {
				if r < rows {
					d[r] = a.Data[base+r*a.RowStride+p*a.ColStride]
				} else {
					d[r] = 0
				}
			}
		}
	}
}

// packB copies the kb×nb block of B at (p0, j0) into nr-column micro-panels, zero-padding the
// last panel: dst[panel*kb*nr + p*nr + c] = B[p0 + p, j0 + panel*nr + c].
func packB(dst []float32, b Matrix, p0, j0, kb, nb int) {
	for jr := 0; jr < nb; jr += nr {
		panel := dst[(jr/nr)*kb*nr : (jr/nr+1)*kb*nr]
		cols := min(nr, nb-jr)
		base := b.Offset + p0*b.RowStride + (j0+jr)*b.ColStride
		if cols == nr && b.ColStride == 1 {
			packRows(panel, b.Data[base:], kb, b.RowStride)
			continue
		}
		if cols == nr && b.RowStride == 1 {
			for c := range nr {
				src := b.Data[base+c*b.ColStride : base+c*b.ColStride+kb]
				for p, v := range src {
					panel[p*nr+c] = v
				}
			}
			continue
		}
		for p := range kb {
			d := panel[p*nr : p*nr+nr]
			for c := range nr {
				if c < cols {
					d[c] = b.Data[base+p*b.RowStride+c*b.ColStride]
				} else {
					d[c] = 0
				}
			}
		}
	}
}

// packRows copies kb rows of nr values, stride elements apart in src, one after another
// into dst: packB's panel of a row-major B. The assembly loop moves a row in two 32-byte
// moves where it runs; a copy() per row took a memmove call for 64 bytes.
func packRows(dst, src []float32, kb, stride int) {
	if kb <= 0 {
		return
	}
	_, _ = dst[kb*nr-1], src[(kb-1)*stride+nr-1]
	if useAVX2 && nr == 16 {
		copyRows16AVX2(kb, &dst[0], &src[0], stride)
		return
	}
	for p := range kb {
		copy(dst[p*nr:p*nr+nr], src[p*stride:p*stride+nr])
	}
}

// kernelGeneric is the pure-Go micro-kernel: for the mr×nr tile,
// acc = Σ_p a[p*mr+i]·b[p*nr+j] (in order of p, from zero), then C = acc or C += acc.
func kernelGeneric(k int, a, b, c []float32, ldc int, accumulate bool) {
	var acc [mr][nr]float32
	a = a[:k*mr]
	b = b[:k*nr]
	for p := range k {
		ap := a[p*mr : p*mr+mr]
		bp := b[p*nr : p*nr+nr]
		for i := range mr {
			ai := ap[i]
			row := &acc[i]
			for j := range nr {
				// The explicit conversion forbids fusing into an FMA, so every architecture
				// rounds the same way.
				row[j] += float32(ai * bp[j])
			}
		}
	}
	for i := range mr {
		row := c[i*ldc : i*ldc+nr]
		if accumulate {
			for j := range nr {
				row[j] += acc[i][j]
			}
		} else {
			copy(row, acc[i][:])
		}
	}
}
