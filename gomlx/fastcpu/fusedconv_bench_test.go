package fastcpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedpipe/fedpipe/gomlx/gemm"
)

// conv2Col2im is cnn4's second convolution's input gradient at batch 32 (12×12×32 input,
// 5×5 kernel, 64 output channels, 8×8 outputs): the product dCols = dZ·Wmᵀ (2048 × 800,
// k = 64) and col2im, the ScatterSum of dCols' 51,200 rows of 32 values into the 4,608
// pixel rows of the input gradient.
type conv2Col2im struct {
	dz, wm []float32 // dZ [2048, 64], Wm [800, 64]
	idx    []int32   // the pixel row of each of dCols' 32-value rows (output position, then kernel tap)
	rows   int       // pixel rows of the input gradient
}

const (
	c2Batch, c2H, c2K, c2Cin, c2Cout = 32, 12, 5, 32, 64
	c2O                              = c2H - c2K + 1 // 8
	c2M                              = c2Batch * c2O * c2O
	c2N                              = c2K * c2K * c2Cin
)

func newConv2Col2im(special bool) conv2Col2im {
	r := rand.New(rand.NewPCG(5, 5))
	c := conv2Col2im{dz: make([]float32, c2M*c2Cout), wm: make([]float32, c2N*c2Cout), rows: c2Batch * c2H * c2H}
	for i := range c.dz {
		c.dz[i] = float32(r.NormFloat64())
	}
	for i := range c.wm {
		c.wm[i] = float32(r.NormFloat64() * 0.05)
	}
	if special { // values whose sums show a change of order or of the first addend
		c.dz[7], c.dz[900], c.wm[3] = float32(math.Inf(1)), float32(math.Copysign(0, -1)), float32(math.NaN())
	}
	for s := range c2Batch {
		for oy := range c2O {
			for ox := range c2O {
				for i := range c2K {
					for j := range c2K {
						c.idx = append(c.idx, int32((s*c2H+oy+i)*c2H+ox+j))
					}
				}
			}
		}
	}
	return c
}

// whole is the input gradient as the graph computes it today: the whole 6.5 MB dCols
// matrix, then the scatter into zeros.
func (c conv2Col2im) whole(dst, cols []float32) {
	gemm.Sgemm(c2M, c2N, c2Cout, gemm.RowMajor(c.dz, 0, c2Cout), gemm.RowMajor(c.wm, 0, c2Cout).T(), cols, 0, c2N, 1)
	clear(dst)
	scatterRuns(dst, cols, c.idx, c2Cin, 0, c.rows)
}

// fused computes dCols a block of rows at a time (gemm.SgemmRows: B packed once) and
// scatters each block before the next: every value is the same product, and every pixel row
// takes its additions in the same order (blocks in increasing row order), so the result is
// the same bits.
func (c conv2Col2im) fused(dst []float32) {
	clear(dst)
	taps := c2K * c2K
	gemm.SgemmRows(c2M, c2N, c2Cout, gemm.RowMajor(c.dz, 0, c2Cout), gemm.RowMajor(c.wm, 0, c2Cout).T(),
		func(i0, i1 int, rows []float32) { scatterRuns(dst, rows, c.idx[i0*taps:i1*taps], c2Cin, 0, c.rows) })
}

// TestCol2imBlockedSameBits checks the premise of fusing col2im into the input gradient's
// product: computing dCols a block of rows at a time and scattering each block at once gives
// the bits of the whole product followed by the whole scatter (infinities, NaN and -0
// included).
func TestCol2imBlockedSameBits(t *testing.T) {
	for _, special := range []bool{false, true} {
		c := newConv2Col2im(special)
		want := make([]float32, c.rows*c2Cin)
		c.whole(want, make([]float32, c2M*c2N))
		got := make([]float32, len(want))
		c.fused(got)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("special=%v: element %d is %v, whole %v", special, i, got[i], want[i])
			}
		}
	}
}

// BenchmarkCol2imBlocked times conv2's input gradient (product and col2im) as the graph
// computes it (whole: dCols through memory) and in blocks of rows whose dCols stays in
// cache, on one thread: go test ./gomlx/fastcpu -run '^$' -bench Col2imBlocked -cpu 1.
// The gain bounds what fusing col2im into the product (one op of the backend) can save.
func BenchmarkCol2imBlocked(b *testing.B) {
	c := newConv2Col2im(false)
	benchWholeFused(b, c, make([]float32, c.rows*c2Cin))
}

// wholeFused is a convolution pass computed through the whole 2048 × 800 matrix (cols, its
// scratch) or fused a block at a time, both writing out.
type wholeFused interface {
	whole(out, cols []float32)
	fused(out []float32)
}

// benchWholeFused times c's two ways as the sub-benchmarks whole and fused.
func benchWholeFused(b *testing.B, c wholeFused, out []float32) {
	b.Run("whole", func(b *testing.B) {
		cols := make([]float32, c2M*c2N)
		for range b.N {
			c.whole(out, cols)
		}
	})
	b.Run("fused", func(b *testing.B) {
		for range b.N {
			c.fused(out)
		}
	})
}

// conv2Im2col is cnn4's second convolution's forward product at batch 32: Z = im2col(x)·Wm
// (2048 × 64, k = 800), im2col's rows being 25 pixel rows of 32 values of x [32, 12, 12, 32].
type conv2Im2col struct {
	x, wm []float32 // x [4608, 32], Wm [800, 64]
	idx   []int32   // conv2Col2im's indices: the pixel row of each 32-value piece of im2col
}

func newConv2Im2col() conv2Im2col {
	r := rand.New(rand.NewPCG(6, 6))
	c := conv2Im2col{x: make([]float32, c2Batch*c2H*c2H*c2Cin), wm: make([]float32, c2N*c2Cout), idx: newConv2Col2im(false).idx}
	for i := range c.x {
		c.x[i] = float32(r.NormFloat64())
	}
	for i := range c.wm {
		c.wm[i] = float32(r.NormFloat64() * 0.05)
	}
	return c
}

// gather writes im2col's rows [i0, i1) into dst (row-major, 800 values a row).
func (c conv2Im2col) gather(dst []float32, i0, i1 int) {
	taps := c2K * c2K
	for q, px := range c.idx[i0*taps : i1*taps] {
		copy(dst[q*c2Cin:(q+1)*c2Cin], c.x[int(px)*c2Cin:])
	}
}

// whole is the forward product as the graph computes it: the whole 6.5 MB im2col matrix,
// then the product.
func (c conv2Im2col) whole(z, cols []float32) {
	c.gather(cols, 0, c2M)
	gemm.Sgemm(c2M, c2Cout, c2N, gemm.RowMajor(cols, 0, c2N), gemm.RowMajor(c.wm, 0, c2Cout), z, 0, c2Cout, 1)
}

// fused gathers im2col a block of rows at a time, just before the product needs it.
func (c conv2Im2col) fused(z []float32) {
	gemm.SgemmRowsFrom(c2M, c2Cout, c2N, func(i0, i1 int, a []float32) { c.gather(a, i0, i1) },
		gemm.RowMajor(c.wm, 0, c2Cout), func(i0, i1 int, rows []float32) { copy(z[i0*c2Cout:], rows) })
}

// TestIm2colBlockedSameBits checks that the forward product with im2col gathered a block at
// a time gives the bits of the product of the whole im2col matrix.
func TestIm2colBlockedSameBits(t *testing.T) {
	c := newConv2Im2col()
	c.x[77], c.x[4000], c.wm[5] = float32(math.Inf(-1)), float32(math.Copysign(0, -1)), float32(math.NaN())
	want, got := make([]float32, c2M*c2Cout), make([]float32, c2M*c2Cout)
	c.whole(want, make([]float32, c2M*c2N))
	c.fused(got)
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("element %d is %v, whole %v", i, got[i], want[i])
		}
	}
}

// BenchmarkIm2colBlocked times conv2's forward product with im2col gathered whole (as the
// graph does) and a block at a time (only a block in cache), on one thread: go test
// ./gomlx/fastcpu -run '^$' -bench Im2colBlocked -cpu 1. The gain bounds what packing
// straight from the activations saves in the forward pass (the weight gradient reads im2col
// too, so the graph can drop the whole matrix only when both are fused).
func BenchmarkIm2colBlocked(b *testing.B) {
	benchWholeFused(b, newConv2Im2col(), make([]float32, c2M*c2Cout))
}
