// Package gemm is fedpipe's single-precision matrix multiplication: a cache-blocked GEMM
// (BLIS-style packing of A and B into micro-panels) whose inner 6×16 micro-kernel is written
// in Go assembly for amd64 CPUs with AVX2 and FMA, with a pure-Go kernel elsewhere.
//
// Results are deterministic and independent of the number of workers: the work is split over
// blocks of output elements, never over the reduction axis, and every output element is
// computed by the same sequence of floating-point operations (the reduction axis is cut into
// fixed KC-sized blocks; within a block the products are accumulated in order starting from
// zero, and block sums are added to the output in order). Which kernel runs (see Kernel) does
// change the rounding, since the assembly kernel uses fused multiply-adds.
package gemm

import (
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
// differently, so it belongs in any identity of computed results.
func Kernel() string { return kernelName }

// minParallelFlops is the size (m·n·k) below which Sgemm runs on the calling goroutine only.
const minParallelFlops = 1 << 15

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
	// Work items: row blocks of mc × column chunks of at most nc, narrowed until there are
	// enough items to keep every worker busy.
	mBlocks := (m + mc - 1) / mc
	nPanels := (n + nr - 1) / nr
	chunk := min(nPanels, nc/nr)
	for mBlocks*((nPanels+chunk-1)/chunk) < 4*workers && chunk > 1 {
		chunk = (chunk + 1) / 2
	}
	nChunks := (nPanels + chunk - 1) / chunk
	items := mBlocks * nChunks
	p := &problem{m: m, n: n, k: k, a: a, b: b, c: c, cOff: cOffset, ldc: ldc, chunk: chunk * nr, nChunks: nChunks}
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
	chunk     int // Columns per work item.
	nChunks   int
}

// workspace holds one worker's packing buffers.
type workspace struct {
	pa   []float32 // mc×kc, as mr-row micro-panels [panel][k][mr].
	pb   []float32 // kc×nc, as nr-column micro-panels [panel][k][nr].
	tile [mr * nr]float32
}

var workspacePool = sync.Pool{New: func() any {
	return &workspace{pa: make([]float32, mc*kc), pb: make([]float32, kc*nc)}
}}

func getWorkspace() *workspace  { return workspacePool.Get().(*workspace) }
func putWorkspace(w *workspace) { workspacePool.Put(w) }

// run computes work item it: rows [i0, i0+mc) × columns [j0, j0+chunk) of C, over all of K.
func (p *problem) run(it int, w *workspace) {
	i0 := (it / p.nChunks) * mc
	j0 := (it % p.nChunks) * p.chunk
	mb := min(mc, p.m-i0)
	nb := min(p.chunk, p.n-j0)
	for p0 := 0; p0 < p.k; p0 += kc {
		kb := min(kc, p.k-p0)
		packB(w.pb, p.b, p0, j0, kb, nb)
		packA(w.pa, p.a, i0, p0, mb, kb)
		accumulate := p0 > 0
		for jr := 0; jr < nb; jr += nr {
			bp := w.pb[(jr/nr)*kb*nr:]
			nn := min(nr, nb-jr)
			for ir := 0; ir < mb; ir += mr {
				ap := w.pa[(ir/mr)*kb*mr:]
				mm := min(mr, mb-ir)
				cIdx := p.cOff + (i0+ir)*p.ldc + j0 + jr
				if mm == mr && nn == nr {
					kernel(kb, ap, bp, p.c[cIdx:], p.ldc, accumulate)
					continue
				}
				// Ragged edge: same kernel into a scratch tile, then copy the valid part.
				kernel(kb, ap, bp, w.tile[:], nr, false)
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
			for r := range mr {
				src := a.Data[base+r*a.RowStride : base+r*a.RowStride+kb]
				for p, v := range src {
					panel[p*mr+r] = v
				}
			}
			continue
		}
		if rows == mr && a.RowStride == 1 {
			for p := range kb {
				src := a.Data[base+p*a.ColStride : base+p*a.ColStride+mr]
				copy(panel[p*mr:p*mr+mr], src)
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
			for p := range kb {
				copy(panel[p*nr:p*nr+nr], b.Data[base+p*b.RowStride:base+p*b.RowStride+nr])
			}
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
