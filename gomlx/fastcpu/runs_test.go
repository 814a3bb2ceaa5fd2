package fastcpu

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// runIndices returns m row indices in [0, rows) made of runs of consecutive rows (lengths
// 1 to maxRun, as im2col's kernel rows), some runs reaching the last row and, with
// outside, running past it, and some indices out of range (which the gather clamps).
func runIndices(r *rand.Rand, rows, m, maxRun int, outside bool) []int32 {
	idx := make([]int32, 0, m)
	for len(idx) < m {
		n := 1 + r.IntN(maxRun)
		start := r.IntN(rows)
		if r.IntN(5) == 0 {
			start = max(0, rows-1-r.IntN(3)) // Runs up to, or past, the last row.
		}
		for j := 0; j < n && len(idx) < m && (outside || start+j < rows); j++ {
			idx = append(idx, int32(start+j))
		}
		if outside && r.IntN(7) == 0 {
			idx = append(idx, int32(-1-r.IntN(3)), int32(rows+r.IntN(3)))
		}
	}
	return idx[:m]
}

// specialSlice returns n values of which about one in eight is an infinity, a signed zero,
// a subnormal or a NaN with a random payload.
func specialSlice(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
		switch r.IntN(16) {
		case 0:
			x[i] = math.Float32frombits(0x7fc00000 | r.Uint32()&0x3fffff | r.Uint32()&0x80000000) // NaN
		case 1:
			x[i] = float32(math.Inf(1 - 2*r.IntN(2)))
		case 2:
			x[i] = float32(math.Copysign(0, float64(1-2*r.IntN(2))))
		case 3:
			x[i] = 1e-40
		}
	}
	return x
}

// addFirst is v + d as the loops fastcpu had before accumulate compiled it on amd64
// (ADDSS with v as the first operand): when both are NaN the result is v's payload,
// quieted. Written out so that the reference does not depend on the operand order the
// compiler picks for a test loop.
func addFirst(v, d float32) float32 {
	const quiet = 0x400000
	switch {
	case v != v:
		return math.Float32frombits(math.Float32bits(v) | quiet)
	case d != d:
		return math.Float32frombits(math.Float32bits(d) | quiet)
	}
	return v + d
}

func sameBits(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestGatherRunsMatchesRowCopy checks gatherRuns against the row-by-row copy it replaced,
// for runs of consecutive indices (coalesced), clamped indices, runs that end at the last
// row, and every split of the rows between callers.
func TestGatherRunsMatchesRowCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, c := range []int{2, 3, 5, 15, 16, 17, 32, 64} {
		for _, rows := range []int{1, 2, 7, 100} {
			m := 300
			idx := runIndices(r, rows, m, 6, true)
			src := specialSlice(r, rows*c)
			want := make([]float32, m*c)
			for i, x := range idx {
				k := min(max(int(x), 0), rows-1)
				copy(want[i*c:(i+1)*c], src[k*c:(k+1)*c])
			}
			for _, split := range []int{0, 1, 37, m} {
				got := make([]float32, m*c)
				gatherRuns(got, src, idx, c, rows, 0, split)
				gatherRuns(got, src, idx, c, rows, split, m)
				if j := sameBits(got, want); j >= 0 {
					t.Fatalf("c %d rows %d split %d: out[%d] = %v, want %v", c, rows, split, j, got[j], want[j])
				}
			}
		}
	}
}

// TestScatterRunsMatchesRowAdd checks scatterRuns, with the assembly loop and without,
// against the row-by-row loop it replaced (each element summed one term at a time in
// increasing m, NaN payloads as that loop's ADDSS chose them), on values with NaNs (random payloads), infinities, signed zeros and
// subnormals, for runs of consecutive rows and any split of the rows between workers.
func TestScatterRunsMatchesRowAdd(t *testing.T) {
	defer func() { noAsm = false }()
	r := rand.New(rand.NewPCG(23, 24))
	for _, c := range []int{2, 3, 7, 8, 9, 16, 31, 32, 64} {
		for _, rows := range []int{1, 3, 50} {
			m := 400
			idx := runIndices(r, rows, m, 6, false)
			upd := specialSlice(r, m*c)
			start := specialSlice(r, rows*c)
			want := append([]float32(nil), start...)
			for i, x := range idx {
				d, s := want[int(x)*c:(int(x)+1)*c], upd[i*c:(i+1)*c]
				for j, v := range s {
					d[j] = addFirst(v, d[j])
				}
			}
			for _, goOnly := range []bool{false, true} {
				noAsm = goOnly
				for _, split := range []int{0, 1, rows / 2, rows} {
					got := append([]float32(nil), start...)
					scatterRuns(got, upd, idx, c, 0, split)
					scatterRuns(got, upd, idx, c, split, rows)
					if j := sameBits(got, want); j >= 0 {
						t.Fatalf("c %d rows %d split %d Go only %v: out[%d] = %#x, want %#x", c, rows, split, goOnly, j,
							math.Float32bits(got[j]), math.Float32bits(want[j]))
					}
				}
			}
		}
	}
}

// TestReduceSumAccumulateMatchesLoop checks reduceFloat32's sums (sumRows: the assembly
// loop over column blocks of 32 and 8, Go past them, on rows of 8 or more) against the
// element-by-element loop they replaced, with special values, on one and several workers.
func TestReduceSumAccumulateMatchesLoop(t *testing.T) {
	defer func() { noAsm = false }()
	r := rand.New(rand.NewPCG(25, 26))
	for _, l := range [][3]int{{1, 500, 32}, {3, 40, 9}, {2, 7, 8}, {1, 100, 7}, {5, 1, 70}, {1, 3000, 64}, {4, 2, 1},
		{1, 5, 100}, {2, 9, 45}, {1, 1, 32}, {3, 0, 16}, {1, 18432, 32}, {2, 300, 519}} {
		outer, red, inner := l[0], l[1], l[2]
		src := specialSlice(r, outer*red*inner)
		want := make([]float32, outer*inner)
		for o := range outer {
			d := want[o*inner : (o+1)*inner]
			for rr := range red {
				for i, v := range src[(o*red+rr)*inner : (o*red+rr+1)*inner] {
					d[i] = addFirst(v, d[i])
				}
			}
		}
		for _, goOnly := range []bool{false, true} {
			noAsm = goOnly
			for _, threads := range []int{1, 3} {
				got := make([]float32, outer*inner)
				reduceFloat32(threads, got, src, outer, red, inner, false)
				if j := sameBits(got, want); j >= 0 {
					t.Fatalf("%v threads %d Go only %v: out[%d] = %#x, want %#x", l, threads, goOnly, j,
						math.Float32bits(got[j]), math.Float32bits(want[j]))
				}
			}
		}
	}
}

// TestRunOpsMatchOracle compares the row Gather and ScatterSum on im2col-like indices
// (runs of consecutive rows) with simplego's, end to end through a graph, on one and
// several workers.
func TestRunOpsMatchOracle(t *testing.T) {
	fast, oracle := backendsPair(t)
	r := rand.New(rand.NewPCG(27, 28))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 3} {
		runtime.GOMAXPROCS(procs)
		for _, c := range [][3]int{{144, 32, 3600}, {784, 3, 20000}, {64, 8, 70000}, {10, 2, 50}} {
			rows, cols, m := c[0], c[1], c[2]
			idx := runIndices(r, rows, m, 5, false)
			x := randTensor(r, rows, cols)
			upd := randTensor(r, m, cols)
			it := tensors.FromFlatDataAndDimensions(idx, m, 1)
			for name, fn := range map[string]func(in []*Node) *Node{
				"gather":  func(in []*Node) *Node { return Gather(in[0], in[1]) },
				"scatter": func(in []*Node) *Node { return ScatterSum(in[0], in[1], Const(in[0].Graph(), upd), false, false) },
			} {
				got, want, dims := runBoth(t, fast, oracle, fn, x, it)
				if j := sameBits(got, want); j >= 0 {
					t.Fatalf("%s %v (GOMAXPROCS %d) → %v: out[%d] = %v, oracle %v", name, c, procs, dims, j, got[j], want[j])
				}
			}
		}
	}
}

// TestBroadcastScalarMatchesOracle compares the broadcast of a float32 scalar (or
// one-element tensor) with simplego's, bit for bit: +0 (cleared), −0, a NaN with a payload,
// an infinity, a subnormal and an ordinary value, into several shapes.
func TestBroadcastScalarMatchesOracle(t *testing.T) {
	fast, oracle := backendsPair(t)
	values := []float32{0, float32(math.Copysign(0, -1)), math.Float32frombits(0xffa12345), float32(math.Inf(-1)), 1e-40, 1.5}
	for _, v := range values {
		for _, dims := range [][]int{{}, {1}, {7}, {3, 5}, {589824, 1}, {4608, 32}} {
			for _, operand := range [][]int{{}, {1}} {
				x := tensors.FromFlatDataAndDimensions([]float32{v}, operand...)
				got, want, outDims := runBoth(t, fast, oracle, func(in []*Node) *Node {
					if len(operand) == 0 {
						return BroadcastToDims(in[0], dims...)
					}
					return BroadcastToDims(Reshape(in[0], make1s(len(dims))...), dims...)
				}, x)
				if len(got) != len(want) {
					t.Fatalf("%v into %v: %d values, oracle %d", v, dims, len(got), len(want))
				}
				if j := sameBits(got, want); j >= 0 {
					t.Fatalf("%#x into %v → %v: out[%d] = %#x, oracle %#x", math.Float32bits(v), dims, outDims, j,
						math.Float32bits(got[j]), math.Float32bits(want[j]))
				}
				for j := range got {
					if math.Float32bits(got[j]) != math.Float32bits(v) {
						t.Fatalf("%#x into %v: out[%d] = %#x", math.Float32bits(v), dims, j, math.Float32bits(got[j]))
					}
				}
			}
		}
	}
}

// make1s returns n ones (a one-element shape of rank n).
func make1s(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// TestInt32BinaryMatchesOracle compares int32 Add, Sub and Mul (full-size operands, either
// one a scalar, owned or not; values that overflow and wrap; lengths with and without a
// tail past the assembly loops' multiple of 8) with simplego's, with the assembly loops
// and in Go alone.
func TestInt32BinaryMatchesOracle(t *testing.T) {
	defer func() { noAsm = false }()
	for _, goOnly := range []bool{false, true} {
		noAsm = goOnly
		testInt32Binary(t)
	}
}

func testInt32Binary(t *testing.T) {
	fast, oracle := backendsPair(t)
	r := rand.New(rand.NewPCG(29, 30))
	ints := func(dims ...int) *tensors.Tensor {
		n := 1
		for _, d := range dims {
			n *= d
		}
		v := make([]int32, n)
		for i := range v {
			switch r.IntN(4) {
			case 0:
				v[i] = int32(r.Uint32()) // Overflows when multiplied.
			default:
				v[i] = int32(r.IntN(2000) - 1000)
			}
		}
		return tensors.FromFlatDataAndDimensions(v, dims...)
	}
	for _, sp := range [][2][]int{{{4608, 32}, {4608, 32}}, {{4608, 32}, {}}, {{}, {512, 64}}, {{}, {}}, {{3, 5}, {1, 1}}, {{1, 1}, {7, 2}}, {{1, 1}, {1, 1}}, {{3, 5}, {1, 5}}, {{4099}, {4099}}, {{4099}, {}}, {{}, {4099}}, {{8}, {}}} {
		for name, fn := range map[string]func(a, b *Node) *Node{"Add": Add, "Sub": Sub, "Mul": Mul} {
			for _, owned := range []bool{false, true} {
				a, b := ints(sp[0]...), ints(sp[1]...)
				run := func(be backends.Backend) []int32 {
					e, err := NewExec(be, func(in []*Node) *Node {
						x, y := in[0], in[1]
						if owned {
							x, y = Neg(Neg(x)), Neg(Neg(y))
						}
						return fn(x, y)
					})
					if err != nil {
						t.Fatal(err)
					}
					defer e.Finalize()
					la, _ := a.LocalClone()
					lb, _ := b.LocalClone()
					outs, err := e.Exec(la, lb)
					if err != nil {
						t.Fatal(err)
					}
					return tensors.MustCopyFlatData[int32](outs[0])
				}
				got, want := run(fast), run(oracle)
				if len(got) != len(want) {
					t.Fatalf("%s %v (owned %v): %d values, oracle %d", name, sp, owned, len(got), len(want))
				}
				for j := range want {
					if got[j] != want[j] {
						t.Fatalf("%s %v (owned %v): out[%d] = %d, oracle %d", name, sp, owned, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// TestGatherValuesMatchesLoop checks gatherValues (VPGATHERDD where there is AVX2) against
// the Go loop, bit for bit on special values, with indices below 0 and past the end
// (clamped), ranges that start anywhere and end with a tail, and one-value sources.
func TestGatherValuesMatchesLoop(t *testing.T) {
	defer func() { noAsm = false }()
	r := rand.New(rand.NewPCG(31, 32))
	for _, rows := range []int{1, 2, 9, 25089} {
		src := specialSlice(r, rows)
		for _, m := range []int{1, 7, 8, 9, 63, 64, 1000} {
			idx := runIndices(r, rows, m, 5, true)
			idx[0], idx[m-1] = math.MinInt32, math.MaxInt32
			want := make([]float32, m)
			for i, x := range idx {
				want[i] = src[min(max(int(x), 0), rows-1)]
			}
			for _, goOnly := range []bool{false, true} {
				noAsm = goOnly
				for _, split := range []int{0, 1, 3, m / 2, m} {
					split = min(split, m)
					got := make([]float32, m)
					gatherValues(got, src, idx, 0, split)
					gatherValues(got, src, idx, split, m)
					if j := sameBits(got, want); j >= 0 {
						t.Fatalf("rows %d m %d split %d Go only %v: out[%d] = %#x, want %#x", rows, m, split, goOnly, j,
							math.Float32bits(got[j]), math.Float32bits(want[j]))
					}
				}
			}
		}
	}
}

// BenchmarkGatherValues times the single-value gather of cnn4's first im2col (32 images of
// 28×28, 5×5 windows: 460,800 values from 25,088) with the assembly loop and in Go.
func BenchmarkGatherValues(b *testing.B) {
	defer func() { noAsm = false }()
	r := rand.New(rand.NewPCG(33, 34))
	src := specialSlice(r, 25088)
	var idx []int32
	for s := range 32 {
		for y := range 24 {
			for x := range 24 {
				for i := range 5 {
					for j := range 5 {
						idx = append(idx, int32(s*784+(y+i)*28+x+j))
					}
				}
			}
		}
	}
	dst := make([]float32, len(idx))
	for _, goOnly := range []bool{false, true} {
		b.Run(map[bool]string{false: "asm", true: "go"}[goOnly], func(b *testing.B) {
			noAsm = goOnly
			for b.Loop() {
				gatherValues(dst, src, idx, 0, len(idx))
			}
		})
	}
}

// BenchmarkReduceSumRows times the bias gradient of cnn4's first convolution at batch 32
// (ReduceSum over the 18,432 rows of a [18432, 32] gradient) with sumRows' assembly loop
// and in Go.
func BenchmarkReduceSumRows(b *testing.B) {
	defer func() { noAsm = false }()
	r := rand.New(rand.NewPCG(35, 36))
	src := make([]float32, 18432*32)
	for i := range src {
		src[i] = float32(r.NormFloat64())
	}
	dst := make([]float32, 32)
	for _, goOnly := range []bool{false, true} {
		b.Run(map[bool]string{false: "asm", true: "go"}[goOnly], func(b *testing.B) {
			noAsm = goOnly
			for b.Loop() {
				reduceFloat32(1, dst, src, 1, 18432, 32, false)
			}
		})
	}
}

// inRangeLoop is the check rowsInRange replaced, one index at a time: the reference.
func inRangeLoop(idx []int32, rows int) bool {
	for _, r := range idx {
		if r < 0 || int(r) >= rows {
			return false
		}
	}
	return true
}

// TestRowsInRange compares rowsInRange with the index-by-index check on indices at and
// around both ends of the range (negative ones, the int32 extremes), one bad index at each
// position of lengths 0 to 13 (the unrolled loop and its tail), and bounds from 0 to past
// 2³¹ (where every non-negative int32 is in range).
func TestRowsInRange(t *testing.T) {
	r := rand.New(rand.NewPCG(48, 3))
	for _, rows := range []int{0, 1, 2, 7, 1000, math.MaxInt32, 1 << 31, 1 << 33} {
		values := []int32{0, 1, -1, math.MinInt32, math.MaxInt32, int32(min(rows, math.MaxInt32)), int32(min(rows, math.MaxInt32) - 1)}
		for n := range 14 {
			for bad := -1; bad < n; bad++ {
				for _, v := range values {
					idx := make([]int32, n)
					for i := range idx {
						idx[i] = int32(r.IntN(max(min(rows, 50), 1)))
						if rows == 0 {
							idx[i] = v // Nothing is in range.
						}
					}
					if bad >= 0 {
						idx[bad] = v
					}
					if got, want := rowsInRange(idx, rows), inRangeLoop(idx, rows); got != want {
						t.Fatalf("rows %d, indices %v: rowsInRange = %v, want %v", rows, idx, got, want)
					}
				}
			}
		}
	}
}

// BenchmarkRowsInRange compares rowsInRange ("new") with the index-by-index check it
// replaced ("old") on the indices of cnn4's max-pooling gradient at batch 32 (147,456,
// all in range): go test ./gomlx/fastcpu -run '^$' -bench RowsInRange -cpu 1 (run it
// several times to interleave the two).
func BenchmarkRowsInRange(b *testing.B) {
	const rows = 32 * 24 * 24 * 32
	idx := make([]int32, 32*12*12*32)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range idx {
		idx[i] = int32(r.IntN(rows))
	}
	for _, c := range []struct {
		name string
		f    func([]int32, int) bool
	}{{"old", inRangeLoop}, {"new", rowsInRange}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if !c.f(idx, rows) {
					b.Fatal("out of range")
				}
			}
		})
	}
}

// TestApplyRepeatedMatchesRows compares applyRepeated (a repeating row, such as a bias,
// applied to up to repeatTile values per call) with apply called row by row, bit for bit on
// NaN payloads, infinities, signed zeros and subnormals: Add, Sub and Mul, rows of 2 to 700
// values (shorter and longer than the tile, multiples of 8 and not), ranges that start and
// end at any row, with the assembly loops and without, and nothing written outside the range.
func TestApplyRepeatedMatchesRows(t *testing.T) {
	defer func() { noAsm = false }()
	r := rand.New(rand.NewPCG(48, 4))
	special := []float32{float32(math.NaN()), math.Float32frombits(0x7fc12345), math.Float32frombits(0xffa00001),
		float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), math.Float32frombits(1), 3.3e38}
	value := func() float32 {
		if r.IntN(5) == 0 {
			return special[r.IntN(len(special))]
		}
		return float32(r.NormFloat64())
	}
	for _, goOnly := range []bool{false, true} {
		noAsm = goOnly
		for _, b := range []int{2, 3, 7, 8, 10, 16, 31, 32, 33, 64, 100, 511, 512, 513, 700} {
			for _, rows := range []int{1, 2, 5, 17, 300} {
				n := rows * b
				x, y := make([]float32, n), make([]float32, b)
				for i := range x {
					x[i] = value()
				}
				for i := range y {
					y[i] = value()
				}
				yt, buf := repeated(y, n)
				for _, op := range []binaryOp{opAdd, opSub, opMul} {
					lo, hi := r.IntN(rows), rows
					if lo < hi-1 {
						hi = lo + 1 + r.IntN(hi-lo)
					}
					sentinel := math.Float32frombits(0x7fa5a5a5)
					want, got := make([]float32, n), make([]float32, n)
					for i := range want {
						want[i], got[i] = sentinel, sentinel
					}
					for row := lo; row < hi; row++ {
						op.apply(want[row*b:(row+1)*b], x[row*b:(row+1)*b], y)
					}
					op.applyRepeated(got, x, yt, lo*b, hi*b)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("op %d, rows of %d, %d rows, range [%d, %d), Go only %v: dst[%d] = %#x, row by row %#x",
								op, b, rows, lo, hi, goOnly, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
						}
					}
				}
				if buf != nil {
					repeatPool.Put(buf)
				}
			}
		}
	}
}

// BenchmarkApplyRepeated times a bias Add over cnn4's convolution outputs at batch 32
// (conv1: 18,432 rows of 32, conv2: 2,048 rows of 64) row by row, one apply per row as
// before repeated ("rows"), and with the row repeated to repeatTile values per call
// ("repeated"): go test ./gomlx/fastcpu -run '^$' -bench ApplyRepeated -cpu 1 (run it
// several times to interleave the two).
func BenchmarkApplyRepeated(b *testing.B) {
	for _, s := range []struct {
		name       string
		rows, cols int
	}{{"conv1", 18432, 32}, {"conv2", 2048, 64}} {
		n := s.rows * s.cols
		x, y, dst := make([]float32, n), make([]float32, s.cols), make([]float32, n)
		for i := range x {
			x[i] = float32(i%13) * 0.25
		}
		yt, buf := repeated(y, n)
		for _, v := range []struct {
			name string
			yt   []float32
		}{{"rows", y}, {"repeated", yt}} {
			b.Run(s.name+"/"+v.name, func(b *testing.B) {
				for range b.N {
					opAdd.applyRepeated(dst, x, v.yt, 0, n)
				}
			})
		}
		if buf != nil {
			repeatPool.Put(buf)
		}
	}
}

// BenchmarkScalarMulSubnormal times the SGD update's scalar product (mom·buf, lr·update) on
// 2²⁰ values whose products are normal floats and whose products or inputs are subnormal,
// which x86 cores compute with a microcode assist when, as IEEE arithmetic asks, flushing to
// zero is off: go test ./gomlx/fastcpu -run '^$' -bench ScalarMulSubnormal -cpu 1. A momentum
// buffer that decays geometrically for hundreds of steps without a restart reaches them.
func BenchmarkScalarMulSubnormal(b *testing.B) {
	const n = 1 << 20
	for _, c := range []struct {
		name string
		v    float32
	}{{"normal", 1e-3}, {"subnormal-product", 1.5e-38}, {"subnormal-input", 1e-40}} {
		x, dst := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = c.v
		}
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				opMul.applyScalarLeft(dst, 0.7, x)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gvalues/s")
		})
	}
}
