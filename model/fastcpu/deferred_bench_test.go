//go:build unix

package fastcpu

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"golang.org/x/sys/unix"
)

// processCPU returns the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSGDUpdate times the SGD update of cnn4's parameters on 28×28×1 (θ' = θ − lr·buf',
// buf' = mom·buf + d, parameters and momentum donated as a Session does) with the products
// fused into their consumers and op by op, in one invocation:
// go test ./model/fastcpu -run '^$' -bench SGDUpdate -count 5. cpu-ns/op is the process's
// CPU time per update (user and system), steadier than ns/op on a busy machine.
func BenchmarkSGDUpdate(b *testing.B) {
	sizes := []int{800, 32, 51200, 64, 524288, 512, 5120, 10}
	for _, mode := range []string{"opbyop", "fused"} {
		b.Run(mode, func(b *testing.B) {
			noDefer = mode == "opbyop"
			defer func() { noDefer = false }()
			backend, err := backends.NewWithConfig(Name + ":threads=1")
			if err != nil {
				b.Fatal(err)
			}
			defer backend.Finalize()
			k := len(sizes)
			e, err := NewExec(backend, func(in []*Node) []*Node { // in: lr, mom, p (k), buf (k), d (k)
				outs := make([]*Node, 2*k)
				for i := range k {
					nm := Add(Mul(in[1], in[2+k+i]), in[2+2*k+i])
					outs[i], outs[k+i] = Sub(in[2+i], Mul(in[0], nm)), nm
				}
				return outs
			})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Finalize()
			r := rand.New(rand.NewPCG(1, 2))
			state := make([]*tensors.Tensor, 2*k)
			grads := make([]*tensors.Tensor, k)
			for i, n := range sizes {
				state[i], state[k+i], grads[i] = randTensor(r, n), randTensor(r, n), randTensor(r, n)
			}
			step := func() {
				args := []any{float32(0.01), float32(0.7)}
				for _, s := range state {
					d, err := DonateTensorBuffer(s, backend, 0)
					if err != nil {
						b.Fatal(err)
					}
					args = append(args, d)
				}
				for _, g := range grads {
					args = append(args, g)
				}
				outs, err := e.Exec(args...)
				if err != nil {
					b.Fatal(err)
				}
				copy(state, outs)
			}
			step()
			b.ResetTimer()
			cpu0 := processCPU()
			for range b.N {
				step()
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
