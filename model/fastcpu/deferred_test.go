package fastcpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// evalAll runs fn on backend b with args (cloned, so each backend gets its own tensors) and
// returns every output's float32 values.
func evalAll(t testing.TB, b backends.Backend, fn func(in []*Node) []*Node, args ...*tensors.Tensor) [][]float32 {
	t.Helper()
	e, err := NewExec(b, fn)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Finalize()
	local := make([]any, len(args))
	for i, a := range args {
		if local[i], err = a.LocalClone(); err != nil {
			t.Fatal(err)
		}
	}
	outs, err := e.Exec(local...)
	if err != nil {
		t.Fatal(err)
	}
	res := make([][]float32, len(outs))
	for i, o := range outs {
		res[i] = tensors.MustCopyFlatData[float32](o)
	}
	return res
}

// owned makes x an intermediate result, whose buffer the op consuming it owns.
func owned(x *Node) *Node { return Add(x, ScalarZero(x.Graph(), x.DType())) }

// TestDeferredProductsMatchOracle runs graphs in which a scalar times a tensor feeds an Add
// or Sub (the SGD update, every operand order, the product's operand owned or an output of
// the graph) and graphs where it must not be deferred (used twice, an output itself,
// broadcast into a larger Add, two deferred operands of one op), on sizes with and without
// a tail past the multiple of 8, with NaNs of random payloads, infinities, signed zeros and
// subnormals in every operand (the scalars too), on 1, 2 and 3 threads: every output must
// have the bits of the same graph run op by op (noDefer), the fused path must have run where
// it applies, and the values must be the oracle's (simplego's) wherever they are not NaN.
func TestDeferredProductsMatchOracle(t *testing.T) {
	if !graphLayoutOK {
		t.Fatal("simplego's Node or Builder layout changed: products are never deferred")
	}
	_, oracle := backendsPair(t)
	r := rand.New(rand.NewPCG(48, 1))
	type graphCase struct {
		name  string
		fused int64 // products deferred per run
		fn    func(in []*Node) []*Node
	}
	cases := []graphCase{
		{"sgd", 2, func(in []*Node) []*Node { // in: lr, mom, p, buf, d
			nm := Add(Mul(in[1], owned(in[3])), in[4])
			return []*Node{Sub(in[2], Mul(in[0], nm)), nm}
		}},
		{"masked sgd", 2, func(in []*Node) []*Node { // d doubles as the mask
			nm := Add(Mul(in[1], owned(in[3])), Mul(in[4], in[2]))
			return []*Node{Sub(in[2], Mul(in[0], Mul(in[4], nm))), nm}
		}},
		{"x+vy and vx-y", 2, func(in []*Node) []*Node {
			return []*Node{Add(in[2], Mul(in[0], owned(in[3]))), Sub(Mul(in[1], owned(in[4])), in[2])}
		}},
		{"used twice", 0, func(in []*Node) []*Node {
			m := Mul(in[0], owned(in[3]))
			return []*Node{Add(m, in[4]), Sub(in[2], m)}
		}},
		{"an output", 0, func(in []*Node) []*Node {
			m := Mul(in[0], owned(in[3]))
			return []*Node{Add(m, in[4]), m}
		}},
		{"operand not owned", 0, func(in []*Node) []*Node {
			return []*Node{Add(Mul(in[0], in[3]), in[4]), Add(in[3], in[2])}
		}},
		{"both deferred", 2, func(in []*Node) []*Node {
			return []*Node{Sub(Mul(in[0], owned(in[3])), Mul(in[1], owned(in[4])))}
		}},
		{"broadcast", 0, func(in []*Node) []*Node {
			n := in[3].Shape().Size()
			m := Mul(in[0], owned(Reshape(in[3], 1, n)))
			return []*Node{Add(m, Reshape(Concatenate([]*Node{in[4], in[2]}, 0), 2, n))}
		}},
	}
	for _, n := range []int{1024, 4099, 51200} {
		args := []*tensors.Tensor{
			tensors.FromValue(float32(0.01)), tensors.FromValue(float32(0.7)),
			tensors.FromFlatDataAndDimensions(specialSlice(r, n), n),
			tensors.FromFlatDataAndDimensions(specialSlice(r, n), n),
			tensors.FromFlatDataAndDimensions(specialSlice(r, n), n),
		}
		special := tensors.FromValue(math.Float32frombits(0x7fc12345)) // A NaN scalar.
		for _, c := range cases {
			for _, scalars := range []string{"plain", "NaN"} {
				in := args
				if scalars == "NaN" {
					in = append([]*tensors.Tensor{special, special}, args[2:]...)
				}
				for _, threads := range []int{1, 2, 3} {
					fast, err := backends.NewWithConfig(fmt.Sprintf("%s:threads=%d", Name, threads))
					if err != nil {
						t.Fatal(err)
					}
					noDefer = true
					want := evalAll(t, fast, c.fn, in...)
					noDefer = false
					before := deferredCount.Load()
					got := evalAll(t, fast, c.fn, in...)
					deferredRuns := deferredCount.Load() - before
					fast.Finalize()
					for o := range want {
						if i := sameBits(got[o], want[o]); i >= 0 {
							t.Fatalf("%s, n=%d, %s scalars, %d threads: output %d [%d] = %#x, op by op %#x", c.name, n,
								scalars, threads, o, i, math.Float32bits(got[o][i]), math.Float32bits(want[o][i]))
						}
					}
					if threads == 1 && scalars == "plain" {
						// Away from NaN payloads, op by op is simplego's arithmetic.
						ref := evalAll(t, oracle, c.fn, in...)
						for o := range ref {
							for i, v := range ref[o] {
								if math.Float32bits(got[o][i]) != math.Float32bits(v) && !math.IsNaN(float64(v)) {
									t.Fatalf("%s, n=%d: output %d [%d] = %v, oracle %v", c.name, n, o, i, got[o][i], v)
								}
							}
						}
					}
					if deferredRuns != c.fused {
						t.Errorf("%s, n=%d: %d products deferred, want %d", c.name, n, deferredRuns, c.fused)
					}
				}
			}
		}
	}
}
