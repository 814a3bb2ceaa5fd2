package fastcpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/gomlx/cpubackend"
)

func backendsPair(t *testing.T) (fast, oracle backends.Backend) {
	t.Helper()
	fast, err := backends.NewWithConfig(Name)
	if err != nil {
		t.Fatal(err)
	}
	oracle, err = backends.NewWithConfig(cpubackend.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fast.Finalize(); oracle.Finalize() })
	return fast, oracle
}

func randTensor(r *rand.Rand, dims ...int) *tensors.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return tensors.FromFlatDataAndDimensions(x, dims...)
}

// runBoth evaluates fn on both backends and returns the flat float32 results and dims.
func runBoth(t *testing.T, fast, oracle backends.Backend, fn func(in []*Node) *Node, args ...any) (got, want []float32, dims []int) {
	t.Helper()
	eval := func(b backends.Backend) ([]float32, []int) {
		e, err := NewExec(b, fn)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Finalize()
		local := make([]any, len(args))
		for i, a := range args {
			if local[i], err = a.(*tensors.Tensor).LocalClone(); err != nil { // One backend per tensor.
				t.Fatal(err)
			}
		}
		outs, err := e.Exec(local...)
		if err != nil {
			t.Fatal(err)
		}
		return tensors.MustCopyFlatData[float32](outs[0]), outs[0].Shape().Dimensions
	}
	got, dims = eval(fast)
	want, wantDims := eval(oracle)
	if fmt.Sprint(dims) != fmt.Sprint(wantDims) {
		t.Fatalf("shape %v, oracle %v", dims, wantDims)
	}
	return got, want, dims
}

// sameAsOracle evaluates fn on both backends and fails t at the first output whose bits
// differ.
func sameAsOracle(t *testing.T, fast, oracle backends.Backend, name string, fn func(in []*Node) *Node, args ...any) {
	t.Helper()
	got, want, dims := runBoth(t, fast, oracle, fn, args...)
	for j := range want {
		if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
			t.Fatalf("%s %v: out[%d] = %v, oracle %v", name, dims, j, got[j], want[j])
		}
	}
}

// TestDotGeneralMatchesOracle compares DotGeneral on random shapes and axis layouts,
// including batch axes, several contracting axes in any order (which need a gather copy) and
// K = 1.
func TestDotGeneralMatchesOracle(t *testing.T) {
	fast, oracle := backendsPair(t)
	r := rand.New(rand.NewPCG(1, 2))
	type dg struct {
		lhs, rhs       []int
		lc, lb, rc, rb []int
	}
	cases := []dg{
		{lhs: []int{5, 7}, rhs: []int{7, 3}, lc: []int{1}, rc: []int{0}},
		{lhs: []int{7, 5}, rhs: []int{7, 3}, lc: []int{0}, rc: []int{0}}, // Aᵀ·B (weight gradient).
		{lhs: []int{5, 7}, rhs: []int{3, 7}, lc: []int{1}, rc: []int{1}}, // A·Bᵀ (input gradient).
		{lhs: []int{5, 1}, rhs: []int{1, 9}, lc: []int{1}, rc: []int{0}}, // K = 1.
		{lhs: []int{1, 1}, rhs: []int{1, 1}, lc: []int{1}, rc: []int{0}}, // Tiny.
		{lhs: []int{300, 130}, rhs: []int{130, 70}, lc: []int{1}, rc: []int{0}},
		{lhs: []int{600, 37}, rhs: []int{600, 45}, lc: []int{0}, rc: []int{0}}, // Large K, ragged.
		{lhs: []int{3, 4, 5, 6}, rhs: []int{3, 6, 2}, lc: []int{3}, lb: []int{0}, rc: []int{1}, rb: []int{0}},
		{lhs: []int{4, 3, 5}, rhs: []int{5, 2, 3}, lc: []int{2}, lb: []int{1}, rc: []int{0}, rb: []int{2}},
		{lhs: []int{2, 3, 4, 5}, rhs: []int{5, 4, 6}, lc: []int{3, 2}, rc: []int{0, 1}}, // Gather path.
		{lhs: []int{6, 2, 7}, rhs: []int{7, 6}, lc: []int{2, 0}, rc: []int{0, 1}},
		{lhs: []int{5}, rhs: []int{5}, lc: []int{0}, rc: []int{0}},
	}
	for range 10 {
		m, n, k, b := 1+r.IntN(40), 1+r.IntN(40), 1+r.IntN(300), 1+r.IntN(3)
		c := dg{lhs: []int{b, m, k}, rhs: []int{b, k, n}, lc: []int{2}, lb: []int{0}, rc: []int{1}, rb: []int{0}}
		if r.IntN(2) == 0 {
			c.lhs, c.lc = []int{b, k, m}, []int{1}
		}
		cases = append(cases, c)
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			got, want, _ := runBoth(t, fast, oracle, func(in []*Node) *Node {
				return DotGeneral(in[0], c.lc, c.lb, in[1], c.rc, c.rb)
			}, randTensor(r, c.lhs...), randTensor(r, c.rhs...))
			k := 1
			for _, a := range c.lc {
				k *= c.lhs[a]
			}
			for j := range want {
				if d := math.Abs(float64(got[j] - want[j])); d > 1e-6*float64(k)+1e-5*math.Abs(float64(want[j])) {
					t.Fatalf("%+v: out[%d] = %v, oracle %v", c, j, got[j], want[j])
				}
			}
		})
	}
}

// TestCopyOpsMatchOracle compares Slice and Concatenate exactly.
func TestCopyOpsMatchOracle(t *testing.T) {
	fast, oracle := backendsPair(t)
	r := rand.New(rand.NewPCG(3, 4))
	check := func(name string, fn func(in []*Node) *Node, args ...any) {
		t.Helper()
		sameAsOracle(t, fast, oracle, name, fn, args...)
	}
	for range 30 {
		rank := 1 + r.IntN(4)
		dims := make([]int, rank)
		for i := range dims {
			dims[i] = 1 + r.IntN(7)
		}
		x := randTensor(r, dims...)
		specs := make([]SliceAxisSpec, rank)
		for i, d := range dims {
			start := r.IntN(d)
			stop := start + 1 + r.IntN(d-start)
			specs[i] = AxisRange(start, stop)
			if r.IntN(3) == 0 {
				specs[i] = specs[i].Stride(1 + r.IntN(3))
			}
			if r.IntN(3) == 0 {
				specs[i] = AxisRange()
			}
		}
		check(fmt.Sprint("Slice", specs), func(in []*Node) *Node { return Slice(in[0], specs...) }, x)

		axis := r.IntN(rank)
		var parts []any
		for range 1 + r.IntN(4) {
			pd := append([]int(nil), dims...)
			pd[axis] = 1 + r.IntN(20) // Includes blocks shorter and longer than 16.
			parts = append(parts, randTensor(r, pd...))
		}
		check(fmt.Sprint("Concatenate axis ", axis), func(in []*Node) *Node { return Concatenate(in, axis) }, parts...)
	}
	// Scalars and non-float32 dtypes go to simplego's implementation.
	check("Slice int", func(in []*Node) *Node {
		return ConvertDType(Slice(ConvertDType(in[0], in[0].DType()), AxisRange(1, 3)), in[0].DType())
	}, randTensor(r, 5))
}

// TestOtherBackendsUntouched checks that the oracle is not routed to the fast GEMM: its
// DotGeneral results must differ (in the last bits) from the fast backend's on a product
// long enough for summation order to matter, and equal simplego's own.
func TestOtherBackendsUntouched(t *testing.T) {
	fast, oracle := backendsPair(t)
	r := rand.New(rand.NewPCG(5, 6))
	a, b := randTensor(r, 64, 3000), randTensor(r, 3000, 32)
	got, want, _ := runBoth(t, fast, oracle, func(in []*Node) *Node { return Dot(in[0], in[1]) }, a, b)
	same := 0
	for i := range want {
		if got[i] == want[i] {
			same++
		}
	}
	if same == len(want) {
		t.Fatalf("fast and oracle products are bit-identical: is the hook in place?")
	}
	if lookup(nil) != nil {
		t.Fatalf("lookup(nil) found a backend")
	}
}

// TestBinaryOpsMatchOracle compares Add, Sub and Mul exactly, with every broadcasting
// pattern (the supported ones and some that fall back to simplego).
// specialTensor is randTensor with about one value in eight an infinity, a signed zero, a
// subnormal or a NaN.
func specialTensor(r *rand.Rand, dims ...int) *tensors.Tensor {
	t := randTensor(r, dims...)
	data := tensors.MustCopyFlatData[float32](t)
	special := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 1e-40, float32(math.NaN())}
	for i := range data {
		if r.IntN(8) == 0 {
			data[i] = special[r.IntN(len(special))]
		}
	}
	return tensors.FromFlatDataAndDimensions(data, dims...)
}

func TestBinaryOpsMatchOracle(t *testing.T) {
	fast, oracle := backendsPair(t)
	r := rand.New(rand.NewPCG(7, 8))
	shapesPairs := [][2][]int{
		{{3, 5}, {3, 5}}, {{3, 5}, {1, 5}}, {{1, 5}, {3, 5}}, {{3, 5}, {1, 1}}, {{1, 1}, {3, 5}},
		{{}, {4, 2}}, {{4, 2}, {}}, {{2, 3, 4}, {1, 1, 4}}, {{1, 3, 4}, {2, 3, 4}},
		{{3, 1}, {3, 5}}, {{3, 5}, {3, 1}}, {{1, 5}, {3, 1}}, {{1000, 64}, {1, 64}},
		{{300, 7}, {}}, {{}, {37, 11}}, {{129}, {129}}, {{4099}, {4099}}, // the assembly loops, with a tail
		{{2000, 32}, {1, 32}}, {{777, 10}, {1, 10}}, {{5, 600}, {1, 600}}, {{3, 40, 33}, {1, 1, 33}}, // biases (applyRepeated)
	}
	for _, sp := range shapesPairs {
		for name, fn := range map[string]func(a, b *Node) *Node{"Add": Add, "Sub": Sub, "Mul": Mul} {
			// Adding zero first makes both inputs owned intermediate results (reusable buffers).
			for _, owned := range []bool{false, true} {
				got, want, dims := runBoth(t, fast, oracle, func(in []*Node) *Node {
					a, b := in[0], in[1]
					if owned {
						a, b = Add(a, ScalarZero(a.Graph(), a.DType())), Add(b, ScalarZero(b.Graph(), b.DType()))
					}
					return fn(a, b)
				}, specialTensor(r, sp[0]...), specialTensor(r, sp[1]...))
				for j := range want {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Fatalf("%s %v %v (owned %v) → %v: out[%d] = %v, oracle %v", name, sp[0], sp[1], owned, dims, j, got[j], want[j])
					}
				}
			}
		}
	}
}

func TestParseConfigThreads(t *testing.T) {
	c, err := ParseConfig("threads=1,workers=3")
	if err != nil || c.Threads != 1 || c.Workers != 3 {
		t.Fatalf("ParseConfig: %+v, %v", c, err)
	}
	for _, bad := range []string{"threads=0", "threads=x", "bogus=1"} {
		if _, err := ParseConfig(bad); err == nil {
			t.Errorf("ParseConfig(%q) accepted", bad)
		}
	}
}

// TestBroadcastInDimMatchesOracle compares BroadcastInDim on random shapes: new axes anywhere,
// size-1 axes repeated, float32 (NaN payloads and −0 included) and int32, and a scalar.
func TestBroadcastInDimMatchesOracle(t *testing.T) {
	fast, oracle := backendsPair(t)
	r := rand.New(rand.NewPCG(5, 6))
	check := func(name string, fn func(in []*Node) *Node, args ...any) {
		t.Helper()
		sameAsOracle(t, fast, oracle, name, fn, args...)
	}
	for range 60 {
		rank := 1 + r.IntN(5)
		dims := make([]int, rank)
		for i := range dims {
			dims[i] = 1 + r.IntN(6)
		}
		var expanded, xdims []int
		for i, d := range dims {
			switch r.IntN(3) {
			case 0:
				expanded = append(expanded, i)
			case 1:
				xdims = append(xdims, 1)
			default:
				xdims = append(xdims, d)
			}
		}
		x := randTensor(r, xdims...)
		tensors.MutableFlatData(x, func(flat []float32) {
			flat[0] = math.Float32frombits(0x7fc01234) // a NaN with a payload
			if len(flat) > 1 {
				flat[1] = float32(math.Copysign(0, -1))
			}
		})
		name := fmt.Sprintf("x %v expanded %v", xdims, expanded)
		check("float32 "+name, func(in []*Node) *Node { return ExpandAndBroadcast(in[0], dims, expanded) }, x)
		check("int32 "+name, func(in []*Node) *Node {
			i := ConvertDType(MulScalar(in[0], 1000), dtypes.Int32)
			return ConvertDType(ExpandAndBroadcast(i, dims, expanded), dtypes.Float32)
		}, x)
	}
	check("scalar", func(in []*Node) *Node { return BroadcastToDims(in[0], 3, 4) }, randTensor(r))
}
