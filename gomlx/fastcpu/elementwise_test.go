package fastcpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// roundedTensor is randTensor rounded to halves (so comparisons see ties) with some
// negative zeros.
func roundedTensor(r *rand.Rand, dims ...int) *tensors.Tensor {
	t := randTensor(r, dims...)
	x := tensors.MustCopyFlatData[float32](t)
	for i := range x {
		x[i] = float32(math.Round(float64(x[i])*2) / 2)
		if x[i] == 0 && r.IntN(2) == 0 {
			x[i] = float32(math.Copysign(0, -1))
		}
	}
	return tensors.FromFlatDataAndDimensions(x, dims...)
}

// TestElementwiseOpsMatchOracle compares Where, Max, GreaterThan, Equal, LogicalAnd,
// LogicalOr, LogicalNot, ReduceSum and ReduceMax bit for bit, on shapes small enough for
// one goroutine and large enough to be split, with one and several workers.
func TestElementwiseOpsMatchOracle(t *testing.T) {
	fast, oracle := backendsPair(t)
	r := rand.New(rand.NewPCG(9, 10))
	toF := func(b *Node) *Node { return ConvertDType(b, dtypes.Float32) }
	own := func(x *Node) *Node { return Add(x, ScalarZero(x.Graph(), x.DType())) }
	zero := func(x *Node) *Node { return ScalarZero(x.Graph(), x.DType()) }
	type opCase struct {
		name string
		fn   func(in []*Node) *Node
	}
	ops := []opCase{
		{"Where", func(in []*Node) *Node { return Where(GreaterThan(in[0], in[1]), in[0], in[1]) }},
		{"WhereOwned", func(in []*Node) *Node { return Where(GreaterThan(in[0], in[1]), own(in[0]), own(in[1])) }},
		{"WhereScalarFalse", func(in []*Node) *Node { return Where(GreaterThan(in[0], zero(in[0])), in[1], zero(in[1])) }},
		{"WhereScalarTrue", func(in []*Node) *Node { return Where(Equal(in[0], in[1]), zero(in[1]), in[1]) }},
		{"WhereZerosLike", func(in []*Node) *Node { return Where(Equal(in[0], in[1]), in[1], ZerosLike(in[1])) }},
		{"Max", func(in []*Node) *Node { return Max(in[0], in[1]) }},
		{"MaxOwned", func(in []*Node) *Node { return Max(own(in[0]), own(in[1])) }},
		{"Relu", func(in []*Node) *Node { return Max(in[0], zero(in[0])) }},
		{"ReluLeft", func(in []*Node) *Node { return Max(zero(in[0]), own(in[0])) }},
		{"GreaterThan", func(in []*Node) *Node { return toF(GreaterThan(in[0], in[1])) }},
		{"GreaterThanScalar", func(in []*Node) *Node { return toF(GreaterThan(in[0], zero(in[0]))) }},
		{"LessThanScalar", func(in []*Node) *Node { return toF(GreaterThan(zero(in[0]), in[0])) }},
		{"Equal", func(in []*Node) *Node { return toF(Equal(in[0], in[1])) }},
		{"EqualScalar", func(in []*Node) *Node { return toF(Equal(zero(in[0]), in[0])) }},
		{"Logical", func(in []*Node) *Node {
			a, b := GreaterThan(in[0], zero(in[0])), Equal(in[0], in[1])
			return Add(toF(LogicalAnd(a, LogicalNot(b))), Mul(toF(LogicalOr(a, b)), Scalar(in[0].Graph(), dtypes.Float32, 2)))
		}},
	}
	for _, axes := range [][]int{{0}, {1}, {2}, {0, 1}, {1, 2}, {0, 1, 2}, {0, 2}} {
		ops = append(ops,
			opCase{fmt.Sprint("ReduceSum", axes), func(in []*Node) *Node { return ReduceSum(in[0], axes...) }},
			opCase{fmt.Sprint("ReduceMax", axes), func(in []*Node) *Node { return ReduceMax(in[0], axes...) }})
	}
	dimsList := [][]int{{1, 1, 1}, {3, 5, 7}, {2, 1, 9}, {40, 3, 700}, {1, 2, 70000}, {9000, 2, 5}}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 3} {
		runtime.GOMAXPROCS(procs)
		for _, dims := range dimsList {
			a, b := roundedTensor(r, dims...), roundedTensor(r, dims...)
			for _, op := range ops {
				got, want, outDims := runBoth(t, fast, oracle, op.fn, a, b)
				for j := range want {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Fatalf("%s %v (GOMAXPROCS %d) → %v: out[%d] = %v, oracle %v", op.name, dims, procs, outDims, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// TestReduceLayout checks the [outer, reduced, inner] view of reduced axes.
func TestReduceLayout(t *testing.T) {
	for _, c := range []struct {
		dims, axes        []int
		outer, red, inner int
		ok                bool
	}{
		{[]int{2, 3, 4}, []int{1}, 2, 3, 4, true},
		{[]int{2, 3, 4}, []int{2, 1}, 2, 12, 1, true},
		{[]int{2, 3, 4}, []int{0}, 1, 2, 12, true},
		{[]int{2, 3, 4}, []int{0, 2}, 0, 0, 0, false},
	} {
		o, rd, in, ok := reduceLayout(c.dims, c.axes)
		if ok != c.ok || (ok && (o != c.outer || rd != c.red || in != c.inner)) {
			t.Errorf("reduceLayout(%v, %v) = %d, %d, %d, %v", c.dims, c.axes, o, rd, in, ok)
		}
	}
}

// TestGatherMatchesOracle compares the im2col row gather (and gathers that fall back to
// simplego) exactly, on one and several workers.
func TestGatherMatchesOracle(t *testing.T) {
	fast, oracle := backendsPair(t)
	r := rand.New(rand.NewPCG(11, 12))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 3} {
		runtime.GOMAXPROCS(procs)
		for _, c := range [][3]int{{5, 1, 7}, {9, 3, 40}, {300, 1, 90000}, {100, 16, 9000}, {1, 2, 3}} {
			rows, cols, m := c[0], c[1], c[2]
			idx := make([]int32, m)
			for i := range idx {
				idx[i] = int32(r.IntN(rows))
			}
			x := randTensor(r, rows, cols)
			it := tensors.FromFlatDataAndDimensions(idx, m, 1)
			for name, fn := range map[string]func(in []*Node) *Node{
				"rows":     func(in []*Node) *Node { return Gather(in[0], in[1]) },
				"fallback": func(in []*Node) *Node { return Gather(Reshape(in[0], rows, cols, 1), in[1]) },
			} {
				got, want, dims := runBoth(t, fast, oracle, fn, x, it)
				for j := range want {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Fatalf("Gather %s %v (GOMAXPROCS %d) → %v: out[%d] = %v, oracle %v", name, c, procs, dims, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// TestScatterSumMatchesOracle compares col2im's row ScatterSum (operand owned or not, many
// updates per row, so the order of the additions shows) and a scatter that falls back to
// simplego, exactly, on one and several workers.
func TestScatterSumMatchesOracle(t *testing.T) {
	fast, oracle := backendsPair(t)
	r := rand.New(rand.NewPCG(13, 14))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 3} {
		runtime.GOMAXPROCS(procs)
		for _, c := range [][3]int{{5, 1, 7}, {9, 3, 40}, {300, 1, 90000}, {100, 16, 9000}, {1, 2, 3}, {144, 32, 3600}} {
			rows, cols, m := c[0], c[1], c[2]
			idx := make([]int32, m)
			for i := range idx {
				idx[i] = int32(r.IntN(rows))
			}
			x := randTensor(r, rows, cols)
			upd := randTensor(r, m, cols)
			it := tensors.FromFlatDataAndDimensions(idx, m, 1)
			for name, fn := range map[string]func(in []*Node) *Node{
				"rows":  func(in []*Node) *Node { return ScatterSum(in[0], in[1], Const(in[0].Graph(), upd), false, false) },
				"owned": func(in []*Node) *Node { return ScatterSum(Neg(in[0]), in[1], Const(in[0].Graph(), upd), false, false) },
				"fallback": func(in []*Node) *Node {
					return ScatterSum(Reshape(in[0], rows, cols, 1), in[1], Reshape(Const(in[0].Graph(), upd), m, cols, 1), false, false)
				},
			} {
				got, want, dims := runBoth(t, fast, oracle, fn, x, it)
				for j := range want {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Fatalf("ScatterSum %s %v (GOMAXPROCS %d) → %v: out[%d] = %v, oracle %v", name, c, procs, dims, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// TestMaxVecMatchesBuiltin checks the assembly max of execMax against Go's builtin max bit
// for bit, on values of which one in eight is a NaN with a random payload, an infinity, a
// signed zero or a subnormal, against a vector and against scalars (a NaN and both zeros
// among them), with and without a tail past the multiple of 8.
func TestMaxVecMatchesBuiltin(t *testing.T) {
	if maxVec(make([]float32, 8), make([]float32, 8), nil, 0) == 0 {
		t.Skip("no AVX2 here: execMax runs the Go loop alone")
	}
	r := rand.New(rand.NewPCG(48, 2))
	for _, n := range []int{8, 29, 1000, 4099} {
		x, y := specialSlice(r, n), specialSlice(r, n)
		got, want := make([]float32, n), make([]float32, n)
		k := maxVec(got, x, y, 0)
		if k != n&^7 {
			t.Fatalf("n=%d: did %d values", n, k)
		}
		for i := range n {
			want[i] = max(x[i], y[i])
		}
		if i := sameBits(got[:k], want[:k]); i >= 0 {
			t.Fatalf("n=%d: max(%#x, %#x) = %#x, Go %#x", n, math.Float32bits(x[i]), math.Float32bits(y[i]),
				math.Float32bits(got[i]), math.Float32bits(want[i]))
		}
		for _, c := range []float32{0, float32(math.Copysign(0, -1)), 0.5, -1e-40, float32(math.Inf(-1)),
			math.Float32frombits(0x7fc12345), math.Float32frombits(0xff812345)} {
			k := maxVec(got, x, nil, c)
			for i := range n {
				want[i] = max(x[i], c)
			}
			if i := sameBits(got[:k], want[:k]); i >= 0 {
				t.Fatalf("n=%d: max(%#x, %#x) = %#x, Go %#x", n, math.Float32bits(x[i]), math.Float32bits(c),
					math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
	}
}

// BenchmarkRelu times max(x, 0) over conv1's pooled output at batch 32 (32·12·12·32 values)
// by Go's builtin max and by the assembly, in one invocation:
// go test ./gomlx/fastcpu -run '^$' -bench Relu -count 5.
func BenchmarkRelu(b *testing.B) {
	x := specialSlice(rand.New(rand.NewPCG(1, 1)), 32*12*12*32)
	dst := make([]float32, len(x))
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			for i := range x {
				dst[i] = max(x[i], 0)
			}
		}
	})
	b.Run("asm", func(b *testing.B) {
		for b.Loop() {
			for i := maxVec(dst, x, nil, 0); i < len(x); i++ {
				dst[i] = max(x[i], 0)
			}
		}
	})
}
