package fastcpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// specials are the values on which a comparison or a selection could differ from Go's:
// signed zeros, NaNs with payloads, infinities, subnormals, ties.
var specials = []float32{0, float32(math.Copysign(0, -1)), 0.5, -0.5, 1e-40, -1e-40, float32(math.Inf(1)),
	float32(math.Inf(-1)), math.Float32frombits(0x7fc12345), math.Float32frombits(0xff812345)}

// TestCompareVecMatchesGo compares the assembly's x > y and x == y with Go's operators on
// every combination of vector and scalar operands, at lengths around the 8-value step.
func TestCompareVecMatchesGo(t *testing.T) {
	if compareVec(true, make([]bool, 8), make([]float32, 8), make([]float32, 8)) == 0 {
		t.Skip("no AVX2 and BMI2 here: GreaterThan and Equal run the Go loops alone")
	}
	r := rand.New(rand.NewPCG(48, 3))
	for _, n := range []int{8, 15, 16, 29, 1000, 4099} {
		x, y := specialSlice(r, n), specialSlice(r, n)
		for i := range n { // ties and specials on both sides
			if r.IntN(4) == 0 {
				y[i] = x[i]
			}
			if r.IntN(8) == 0 {
				x[i] = specials[r.IntN(len(specials))]
			}
		}
		type operands struct {
			name string
			x, y []float32
		}
		cases := []operands{{"vector-vector", x, y}}
		for _, c := range specials {
			cases = append(cases, operands{"vector-scalar", x, []float32{c}}, operands{"scalar-vector", []float32{c}, y})
		}
		at := func(v []float32, i int) float32 {
			if len(v) == 1 {
				return v[0]
			}
			return v[i]
		}
		for _, c := range cases {
			for _, greater := range []bool{true, false} {
				got := make([]bool, n)
				k := compareVec(greater, got, c.x, c.y)
				if k != n&^7 {
					t.Fatalf("%s n=%d: did %d values", c.name, n, k)
				}
				for i := range k {
					a, b := at(c.x, i), at(c.y, i)
					want := a == b
					if greater {
						want = a > b
					}
					if got[i] != want {
						t.Fatalf("%s n=%d greater=%v: %#x vs %#x gave %v, Go %v", c.name, n, greater,
							math.Float32bits(a), math.Float32bits(b), got[i], want)
					}
				}
			}
		}
	}
}

// TestSelectVecMatchesGo compares the assembly's selection with selectFloat32's Go loops
// (noAsm) bit for bit, with vector and scalar values on either side.
func TestSelectVecMatchesGo(t *testing.T) {
	if selectVec(make([]float32, 8), make([]bool, 8), make([]float32, 8), make([]float32, 8)) == 0 {
		t.Skip("no AVX2 and BMI2 here: Where runs the Go loops alone")
	}
	defer func() { noAsm = false }()
	r := rand.New(rand.NewPCG(48, 4))
	for _, n := range []int{8, 15, 16, 29, 1000, 4099} {
		cond := make([]bool, n)
		for i := range cond {
			cond[i] = r.IntN(2) == 0
		}
		x, y := specialSlice(r, n), specialSlice(r, n)
		for _, c := range specials {
			for _, vals := range [][2][]float32{{x, y}, {x, {c}}, {{c}, y}, {{c}, {-c}}} {
				got, want := make([]float32, n), make([]float32, n)
				for _, lo := range []int{0, 3} { // a part that starts off the 8-value grid too
					noAsm = false
					selectFloat32(got, cond, vals[0], vals[1], lo, n)
					noAsm = true
					selectFloat32(want, cond, vals[0], vals[1], lo, n)
					if i := sameBits(got, want); i >= 0 {
						t.Fatalf("n=%d lo=%d: element %d is %#x, Go %#x", n, lo, i, math.Float32bits(got[i]),
							math.Float32bits(want[i]))
					}
				}
			}
		}
	}
}

// BenchmarkReluGradient times ReLU's gradient mask over conv1's pooled output at batch 32
// (32·12·12·32 values): x > 0, then where(x > 0, dy, 0), by the Go loops and by the
// assembly, in one invocation: go test ./gomlx/fastcpu -run '^$' -bench ReluGradient -count 5.
func BenchmarkReluGradient(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x, dy := specialSlice(r, 32*12*12*32), specialSlice(r, 32*12*12*32)
	mask, dx := make([]bool, len(x)), make([]float32, len(x))
	zero := []float32{0}
	for _, asm := range []bool{false, true} {
		name := "go"
		if asm {
			name = "asm"
		}
		b.Run(name, func(b *testing.B) {
			defer func() { noAsm = false }()
			noAsm = !asm
			for b.Loop() {
				k := compareVec(true, mask, x, zero)
				for i := k; i < len(x); i++ {
					mask[i] = x[i] > 0
				}
				selectFloat32(dx, mask, dy, zero, 0, len(x))
			}
		})
	}
}
