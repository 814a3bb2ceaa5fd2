package fastcpu

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck // GoMLX's idiomatic dot-import.
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestArgMinMaxMatchesOracle compares ArgMax and ArgMin with simplego's on values with many
// ties, signed zeros and NaNs, over every axis, on one and several workers.
func TestArgMinMaxMatchesOracle(t *testing.T) {
	fast, oracle := backendsPair(t)
	r := rand.New(rand.NewPCG(15, 16))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	defer func() { noAsm = false }()
	for _, procs := range []int{1, 3} {
		runtime.GOMAXPROCS(procs)
		noAsm = procs == 3 // Go alone on several workers; with assembly where there is some on one
		for _, dims := range [][]int{{4608, 4, 32}, {7, 5}, {3, 1, 9}, {2, 3, 4, 5}, {70000}, {5, 3, 19}} {
			n := 1
			for _, d := range dims {
				n *= d
			}
			x := make([]float32, n)
			for i := range x {
				switch r.IntN(20) {
				case 0:
					x[i] = float32(math.NaN())
				case 1:
					x[i] = float32(math.Copysign(0, -1))
				case 2:
					x[i] = 0
				default:
					x[i] = float32(r.IntN(5)) // ties
				}
			}
			xt := tensors.FromFlatDataAndDimensions(x, dims...)
			for axis := range dims {
				for _, isMin := range []bool{false, true} {
					fn := func(in []*Node) *Node {
						if isMin {
							return ConvertDType(ArgMin(in[0], axis, dtypes.Int32), dtypes.Float32)
						}
						return ConvertDType(ArgMax(in[0], axis, dtypes.Int32), dtypes.Float32)
					}
					got, want, _ := runBoth(t, fast, oracle, fn, xt)
					for j := range want {
						if got[j] != want[j] {
							t.Fatalf("dims %v axis %d min %v (GOMAXPROCS %d): index %d = %v, oracle %v", dims, axis, isMin, procs, j, got[j], want[j])
						}
					}
				}
			}
		}
	}
}

// BenchmarkArgExtreme times the ArgMax of max-pooling's windows at conv1's shape (batch 32:
// 4608 windows of 4 rows of 32 channels) on random data, one worker, with the assembly and
// with the Go loop alone.
func BenchmarkArgExtreme(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, 4608*4*32)
	for i := range src {
		src[i] = float32(r.NormFloat64())
	}
	dst := make([]int32, 4608*32)
	defer func() { noAsm = false }()
	for _, goOnly := range []bool{false, true} {
		name := map[bool]string{false: "asm", true: "go"}[goOnly]
		b.Run(name, func(b *testing.B) {
			noAsm = goOnly
			for range b.N {
				argExtreme(dst, src, 0, 4608, 4, 32, false)
			}
		})
	}
}
