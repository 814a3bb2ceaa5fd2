package fastcpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedpipe/fedpipe/model/gemm"
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
// cache, on one thread: go test ./model/fastcpu -run '^$' -bench Col2imBlocked -cpu 1.
// The gain bounds what fusing col2im into the product (one op of the backend) can save.
func BenchmarkCol2imBlocked(b *testing.B) {
	c := newConv2Col2im(false)
	dst := make([]float32, c.rows*c2Cin)
	b.Run("whole", func(b *testing.B) {
		cols := make([]float32, c2M*c2N)
		for range b.N {
			c.whole(dst, cols)
		}
	})
	b.Run("fused", func(b *testing.B) {
		for range b.N {
			c.fused(dst)
		}
	})
}
