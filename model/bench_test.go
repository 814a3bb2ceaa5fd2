package model

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// BenchmarkCNN4 reports training and inference throughput of cnn4 (batch 32) on the default
// backend for MNIST-sized and CIFAR-sized inputs. Run with
// go test ./model -run '^$' -bench CNN4 -benchtime 1x.
func BenchmarkCNN4(b *testing.B) {
	for _, c := range []struct{ hw, channels int }{{28, 1}, {32, 3}} {
		b.Run(fmt.Sprintf("%dx%dx%d", c.hw, c.hw, c.channels), func(b *testing.B) {
			for range b.N {
				train, infer, err := BenchCNN4("", c.hw, c.channels, 32, 60)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(train, "train_samples/s")
				b.ReportMetric(infer, "infer_samples/s")
			}
		})
	}
}

// BenchmarkResNet18 reports ResNet-18 (CIFAR variant) training throughput at batch 32 on
// 32×32×3. Run with go test ./model -run '^$' -bench ResNet18 -benchtime 1x.
func BenchmarkResNet18(b *testing.B) {
	spec := ModelSpec{Arch: ArchResNet18, InputShape: []int{32, 32, 3}, NumClasses: 10}
	for range b.N {
		train, infer, err := BenchModel("", spec, 32, 3)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(train, "train_samples/s")
		b.ReportMetric(infer, "infer_samples/s")
	}
}

// BenchmarkStepCNN4 times single cnn4 training steps on 28×28×1 at batch 32 (b.N steps after a
// warm-up), for profiling the step: go test ./model -run '^$' -bench StepCNN4 -benchtime 200x
// -cpuprofile cpu.out -memprofile mem.out (allocs/op counts the per-step allocations).
func BenchmarkStepCNN4(b *testing.B) {
	spec := ModelSpec{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}
	m, err := NewModel("", spec)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	s, err := m.NewSession(spec.Init(0), SGD{LR: 0.01, Momentum: 0.7})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	x, y := randomData(rand.New(rand.NewPCG(1, 1)), 32, 28*28, 10)
	for range 3 {
		if _, err := s.Step(x, y); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := s.Step(x, y); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*32)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkLockstepCNN4 compares 10 clients' cnn4 28×28×1 steps (batch 32) run as one
// lockstep MultiSession step with the same steps run through 10 Sessions:
// go test ./model -run '^$' -bench Lockstep -benchtime 20x.
func BenchmarkLockstepCNN4(b *testing.B) {
	const clients = 10
	spec := ModelSpec{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}
	m, err := NewModel("", spec)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	r := rand.New(rand.NewPCG(1, 1))
	xs, ys := make([][]float32, clients), make([][]int32, clients)
	inits := make([]tensor.List, clients)
	for c := range clients {
		xs[c], ys[c] = randomData(r, 32, 28*28, 10)
		inits[c] = spec.Init(uint64(c))
	}
	opt := SGD{LR: 0.01, Momentum: 0.7}
	b.Run("sequential", func(b *testing.B) {
		sessions := make([]*Session, clients)
		for c := range clients {
			if sessions[c], err = m.NewSession(inits[c], opt); err != nil {
				b.Fatal(err)
			}
			defer sessions[c].Close()
		}
		b.ResetTimer()
		for range b.N {
			for c, s := range sessions {
				if _, err := s.Step(xs[c], ys[c]); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.N*clients*32)/b.Elapsed().Seconds(), "samples/s")
	})
	b.Run("lockstep", func(b *testing.B) {
		ms, err := m.NewMultiSession(inits, opt)
		if err != nil {
			b.Fatal(err)
		}
		defer ms.Close()
		if _, err := ms.Step(xs, ys); err != nil { // compile
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if _, err := ms.Step(xs, ys); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*clients*32)/b.Elapsed().Seconds(), "samples/s")
	})
}
