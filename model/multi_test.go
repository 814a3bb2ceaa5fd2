package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

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
		{Arch: ArchFedAvgCNN, InputShape: []int{9, 10, 2}, NumClasses: 5}, // padded convolutions
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
// col2im's indices, scattered or gathered) are those of one client's batch, whatever the
// number of clients (XLA constant-folds them at every compilation: docs/gpus.md).
func TestMultiStepConstantsDoNotGrowWithClients(t *testing.T) {
	spec := ModelSpec{Arch: ArchCNN4, InputShape: []int{16, 16, 2}, NumClasses: 5}
	m, err := NewModel(CPUBackend, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ls := m.net.(seqNet)
	largest := func(clients int, gather bool) (biggest int) {
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
		multiTrainStepGraph([]layer(ls), inputs, gather)
		for _, n := range g.Nodes() {
			if n.Type() == graph.NodeTypeConstant {
				biggest = max(biggest, n.Shape().Size())
			}
		}
		return biggest
	}
	for _, gather := range []bool{false, true} { // col2im as a ScatterSum (CPU), as a Gather (XLA)
		one, many := largest(1, gather), largest(6, gather)
		if one < 4*12*12*25 || many != one {
			t.Errorf("gather=%v: largest constant: %d values with 1 client, %d with 6; want the same, one batch's im2col indices (%d) or more",
				gather, one, many, 4*12*12*25)
		}
	}
}

// TestCol2imGatherIndicesInvertIm2col: every row of im2col's indices that copied a pixel is
// listed once, at that pixel, each pixel's rows in increasing order and then the zero row,
// for odd sizes (rows and columns no pooling window covers), two samples, and padding
// (fedavgcnn's), whose rows are listed at no pixel.
func TestCol2imGatherIndicesInvertIm2col(t *testing.T) {
	const b, h, w, k = 2, 7, 6, 3
	for _, pad := range []int{0, 1, 2} {
		oh, ow := h+2*pad-k+1, w+2*pad-k+1
		src := im2colIndexList(b, h, w, k, pad, oh, ow)
		idxT, slots := col2imGatherIndices(b, h, w, k, pad, oh, ow)
		idx := tensors.MustCopyFlatData[int32](idxT)
		if slots != k*k || len(idx) != b*h*w*slots {
			t.Fatalf("pad %d: %d slots, %d indices; want %d, %d", pad, slots, len(idx), k*k, b*h*w*k*k)
		}
		zero := int32(len(src))
		seen := make([]bool, len(src))
		for px := range b * h * w {
			last, padded := int32(-1), false
			for _, r := range idx[px*slots : (px+1)*slots] {
				switch {
				case r == zero:
					padded = true
				case padded || r <= last || r < 0 || r > zero:
					t.Fatalf("pad %d, pixel %d: rows %v not increasing, then the zero row %d", pad, px, idx[px*slots:(px+1)*slots], zero)
				case int(src[r]) != px || seen[r]:
					t.Fatalf("pad %d: pixel %d lists row %d, which copied pixel %d (seen before: %v)", pad, px, r, src[r], seen[r])
				default:
					seen[r], last = true, r
				}
			}
		}
		padding := 0
		for r, ok := range seen {
			switch {
			case int(src[r]) == b*h*w:
				padding++
				if ok {
					t.Fatalf("pad %d: row %d reads the padding but is listed", pad, r)
				}
			case !ok:
				t.Fatalf("pad %d: row %d (pixel %d) is listed at no pixel", pad, r, src[r])
			}
		}
		if want := b*oh*ow*k*k - b*h*w*k*k; pad > 0 && padding == 0 || pad == 0 && padding != 0 || padding < want {
			t.Fatalf("pad %d: %d rows read the padding (at least %d expected)", pad, padding, want)
		}
	}
}

// TestMultiSessionGatheredCol2im: the lockstep step with col2im as a Gather and a ReduceSum
// (XLA's) trains every client as the ScatterSum step does, up to the order of each pixel's
// sum (relative difference at most 1e-5 after 6 steps; clients of uneven sizes, one idle at
// the end), and XLA backends get it.
func TestMultiSessionGatheredCol2im(t *testing.T) {
	for _, spec := range []ModelSpec{
		{Arch: ArchCNN4, InputShape: []int{16, 16, 2}, NumClasses: 5},
		{Arch: ArchFedAvgCNN, InputShape: []int{9, 10, 2}, NumClasses: 5}, // padded convolutions
	} {
		multiGatheredCol2im(t, spec)
	}
	if !usesXLA("xla:cuda") || !usesXLA("xla:/opt/x/xla_cuda_plugin.so,tf32") || usesXLA(CPUBackend) || usesXLA("fpcpu") {
		t.Error("usesXLA: want the xla configurations and no other")
	}
}

// multiGatheredCol2im is TestMultiSessionGatheredCol2im's comparison for one model.
func multiGatheredCol2im(t *testing.T, spec ModelSpec) {
	t.Helper()
	r := rand.New(rand.NewPCG(4, 4))
	sizes := []int{40, 20, 5}
	const batch = 8
	var xs [][]float32
	var ys [][]int32
	var inits []tensor.List
	for ci, n := range sizes {
		x, y := randomData(r, n, tensor.Size(spec.InputShape), spec.NumClasses)
		xs, ys = append(xs, x), append(ys, y)
		inits = append(inits, spec.Init(uint64(ci+3)))
	}
	train := func(gather bool) []tensor.List {
		m, err := NewModel(CPUBackend, spec)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		m.gatherCol2im = gather
		ms, err := m.NewMultiSession(inits, SGD{LR: 0.05, Momentum: 0.7})
		if err != nil {
			t.Fatal(err)
		}
		defer ms.Close()
		sample := tensor.Size(spec.InputShape)
		for step := range 5 {
			bx, by := make([][]float32, len(sizes)), make([][]int32, len(sizes))
			for ci, n := range sizes {
				if lo := step * batch; lo < n {
					hi := min(lo+batch, n)
					bx[ci], by[ci] = xs[ci][lo*sample:hi*sample], ys[ci][lo:hi]
				}
			}
			if _, err := ms.Step(bx, by); err != nil {
				t.Fatal(err)
			}
		}
		p, err := ms.Params()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	scattered, gathered := train(false), train(true)
	for ci := range sizes {
		var diff, norm float64
		for i, tv := range scattered[ci] {
			for j, v := range tv.Data {
				d := float64(gathered[ci][i].Data[j]) - float64(v)
				diff, norm = diff+d*d, norm+float64(v)*float64(v)
			}
		}
		if rel := math.Sqrt(diff / norm); !(rel <= 1e-5) {
			t.Errorf("%s client %d: gathered col2im %.3g from the scattered one; want ≤ 1e-5", spec.Arch, ci, rel)
		}
	}
}
