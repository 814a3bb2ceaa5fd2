package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// TestMultiSessionMatchesSessions trains three clients with uneven data (so some are idle
// in later lockstep steps, and last batches are ragged) in lockstep and each with its own
// Session, and checks every client's losses and final parameters agree bit for bit, with
// one compiled lockstep graph.
func TestMultiSessionMatchesSessions(t *testing.T) {
	for _, spec := range []ModelSpec{
		{Arch: ArchCNN4, InputShape: []int{16, 16, 2}, NumClasses: 5},
		{Arch: ArchMLP, InputShape: []int{12}, Hidden: []int{9}, NumClasses: 4},
	} {
		t.Run(spec.Arch, func(t *testing.T) {
			m, err := NewModel(CPUBackend, spec)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			sample := tensor.Size(spec.InputShape)
			r := rand.New(rand.NewPCG(8, 8))
			sizes := []int{40, 17, 5}
			const batch, epochs = 16, 2
			opt := SGD{LR: 0.05, Momentum: 0.7, WeightDecay: 1e-3}
			var xs [][]float32
			var ys [][]int32
			var inits []tensor.List
			for ci, n := range sizes {
				x, y := randomData(r, n, sample, spec.NumClasses)
				xs, ys = append(xs, x), append(ys, y)
				inits = append(inits, spec.Init(uint64(ci)))
			}
			// batches[ci] lists client ci's batches over the epochs, in order.
			batches := make([][][2]int, len(sizes))
			for ci, n := range sizes {
				for range epochs {
					for s := 0; s < n; s += batch {
						batches[ci] = append(batches[ci], [2]int{s, min(s+batch, n)})
					}
				}
			}
			var want []tensor.List
			var wantLoss [][]float32
			for ci := range sizes {
				s, err := m.NewSession(inits[ci], opt)
				if err != nil {
					t.Fatal(err)
				}
				var losses []float32
				for _, bt := range batches[ci] {
					l, err := s.Step(xs[ci][bt[0]*sample:bt[1]*sample], ys[ci][bt[0]:bt[1]])
					if err != nil {
						t.Fatal(err)
					}
					losses = append(losses, l)
				}
				p, err := s.Params()
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
				want, wantLoss = append(want, p), append(wantLoss, losses)
			}
			ms, err := m.NewMultiSession(inits, opt)
			if err != nil {
				t.Fatal(err)
			}
			defer ms.Close()
			steps := len(batches[0])
			for step := range steps {
				bx := make([][]float32, len(sizes))
				by := make([][]int32, len(sizes))
				for ci := range sizes {
					if step < len(batches[ci]) {
						bt := batches[ci][step]
						bx[ci], by[ci] = xs[ci][bt[0]*sample:bt[1]*sample], ys[ci][bt[0]:bt[1]]
					}
				}
				losses, err := ms.Step(bx, by)
				if err != nil {
					t.Fatal(err)
				}
				for ci := range sizes {
					if step < len(batches[ci]) && math.Float32bits(losses[ci]) != math.Float32bits(wantLoss[ci][step]) {
						t.Fatalf("client %d step %d: lockstep loss %v, own session %v", ci, step, losses[ci], wantLoss[ci][step])
					}
				}
			}
			got, err := ms.Params()
			if err != nil {
				t.Fatal(err)
			}
			for ci := range sizes {
				sameBits(t, "lockstep client", got[ci], want[ci])
			}
			if c := m.Compilations()["train-multi"]; c != 1 {
				t.Errorf("compiled %d lockstep graphs, want 1", c)
			}
			// A later MultiSession of as many clients reuses the Model's graph, even for a
			// smaller batch (padded to the largest seen).
			ms2, err := m.NewMultiSession(inits, opt)
			if err != nil {
				t.Fatal(err)
			}
			defer ms2.Close()
			small := make([][]float32, len(sizes))
			smallY := make([][]int32, len(sizes))
			small[0], smallY[0] = xs[0][:3*sample], ys[0][:3]
			if _, err := ms2.Step(small, smallY); err != nil {
				t.Fatal(err)
			}
			if c := m.Compilations()["train-multi"]; c != 1 {
				t.Errorf("a second MultiSession compiled again: %d lockstep graphs, want 1", c)
			}
		})
	}
}

// TestMultiStepConstantsDoNotGrowWithClients: the lockstep step's constants (im2col's and
// col2im's indices) are those of one client's batch, whatever the number of clients (XLA
// constant-folds them at every compilation: docs/gpus.md).
func TestMultiStepConstantsDoNotGrowWithClients(t *testing.T) {
	spec := ModelSpec{Arch: ArchCNN4, InputShape: []int{16, 16, 2}, NumClasses: 5}
	m, err := NewModel(CPUBackend, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ls := m.net.(seqNet)
	largest := func(clients int) (biggest int) {
		g := graph.NewGraph(m.backend, "constants")
		defer g.Finalize()
		const batch = 4
		var inputs []*graph.Node
		for range 2 { // parameters, then momentum buffers
			for _, s := range m.shapes {
				inputs = append(inputs, graph.Parameter(g, "", shapes.Make(dtypes.Float32, append([]int{clients}, s...)...)))
			}
		}
		inputs = append(inputs,
			graph.Parameter(g, "x", shapes.Make(dtypes.Float32, append([]int{clients, batch}, spec.InputShape...)...)),
			graph.Parameter(g, "y", shapes.Make(dtypes.Int32, clients, batch)),
			graph.Parameter(g, "hyper", shapes.Make(dtypes.Float32, 3)))
		multiTrainStepGraph([]layer(ls), inputs)
		for _, n := range g.Nodes() {
			if n.Type() == graph.NodeTypeConstant {
				biggest = max(biggest, n.Shape().Size())
			}
		}
		return biggest
	}
	one, many := largest(1), largest(6)
	if one < 4*12*12*25 || many != one {
		t.Errorf("largest constant: %d values with 1 client, %d with 6; want the same, one batch's im2col indices (%d)", one, many, 4*12*12*25)
	}
}
