package model

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/fedpipe/fedpipe/gomlx/fastcpu"
	"github.com/fedpipe/fedpipe/stages/data"
)

// BenchmarkStepOps times a cnn4 training step op by op (fastcpu.RecordOpTimes) and prints
// each kind of op's share, largest first: b.N steps on 28×28×1 at batch 32, SGD lr 0.01
// momentum 0.7, on Fashion-MNIST batches where it is installed (clients of 525 samples,
// 80% from two classes, as a Dir(0.1) client is skewed; each client from the last one's
// weights, momentum from zero) and on random data elsewhere, whose gradients differ:
// go test ./model -run '^$' -bench StepOps -benchtime 400x -cpu 1.
func BenchmarkStepOps(b *testing.B) {
	spec := ModelSpec{Arch: ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}
	m, err := NewModel("", spec)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	r := rand.New(rand.NewPCG(3, 3))
	batches := stepOpsBatches(b, r)
	params := spec.Init(0)
	var stop func() []fastcpu.OpTime
	steps := 0
	for steps < b.N+85 { // one client's 85 steps of warm-up, not recorded
		s, err := m.NewSession(params, SGD{LR: 0.01, Momentum: 0.7})
		if err != nil {
			b.Fatal(err)
		}
		for range 85 { // 5 epochs of 17 batches
			if steps == 85 {
				b.ResetTimer()
				stop = fastcpu.RecordOpTimes()
			}
			x, y := batches()
			if _, err := s.Step(x, y); err != nil {
				b.Fatal(err)
			}
			if steps++; steps == b.N+85 {
				break
			}
		}
		if params, err = s.Params(); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	b.StopTimer()
	times := stop()
	if b.N < 10 { // the testing package's first call, b.N = 1: too few steps for a table
		return
	}
	var total float64
	for _, t := range times {
		total += t.Time.Seconds()
	}
	fmt.Fprintf(os.Stdout, "%d steps: %.2f ms a step in the ops (µs a step, share, op with output <- input shapes)\n",
		b.N, 1e3*total/float64(b.N))
	for _, t := range times[:min(25, len(times))] {
		fmt.Fprintf(os.Stdout, "%9.1f %5.1f%%  %s\n", 1e6*t.Time.Seconds()/float64(b.N), 100*t.Time.Seconds()/total, t.Op)
	}
}

// stepOpsBatches returns a source of batches of 32 for BenchmarkStepOps: a new skewed
// Fashion-MNIST client every 85 batches, or random data without Fashion-MNIST.
func stepOpsBatches(b *testing.B, r *rand.Rand) func() ([]float32, []int32) {
	d, err := data.LoadFashionMNIST(data.FMNISTSystemDir)
	if err != nil {
		b.Logf("Fashion-MNIST not installed (%v): random data", err)
		return func() ([]float32, []int32) { return randomData(r, 32, 28*28, 10) }
	}
	byClass := make([][]int, d.Classes)
	for i, y := range d.Y {
		byClass[y] = append(byClass[y], i)
	}
	var client []int
	next := 0
	return func() ([]float32, []int32) {
		if next%85 == 0 {
			client = client[:0]
			c1, c2 := r.IntN(10), r.IntN(10)
			for range 525 {
				c := r.IntN(10)
				if r.Float64() < 0.8 {
					c = []int{c1, c2}[r.IntN(2)]
				}
				client = append(client, byClass[c][r.IntN(len(byClass[c]))])
			}
		}
		if next%17 == 0 {
			r.Shuffle(len(client), func(i, j int) { client[i], client[j] = client[j], client[i] })
		}
		at := next % 17 * 32
		next++
		return d.Gather(client[at : at+32])
	}
}
