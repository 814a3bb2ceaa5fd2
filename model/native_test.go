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

// nativeSpecs are the networks the native-form tests train: valid and padded convolutions,
// even and odd sizes (pooling floors an odd convolution output, whose last row and column
// get no gradient), one and three channels.
var nativeSpecs = []ModelSpec{
	{Arch: ArchCNN4, InputShape: []int{16, 16, 2}, NumClasses: 5},
	{Arch: ArchCNN4, InputShape: []int{19, 17, 3}, NumClasses: 4},      // conv1 15×13, conv2 3×2
	{Arch: ArchFedAvgCNN, InputShape: []int{9, 10, 2}, NumClasses: 5},  // padded, conv1 9×10
	{Arch: ArchFedAvgCNN, InputShape: []int{11, 13, 1}, NumClasses: 3}, // padded, odd everywhere
}

// relDist is ‖a − b‖ / ‖b‖ over every tensor of two parameter lists.
func relDist(a, b tensor.List) float64 {
	var diff, norm float64
	for i, tv := range b {
		for j, v := range tv.Data {
			d := float64(a[i].Data[j]) - float64(v)
			diff, norm = diff+d*d, norm+float64(v)*float64(v)
		}
	}
	return math.Sqrt(diff / norm)
}

// TestNativeSessionMatchesIm2col trains one client for several SGD steps (momentum, weight
// decay, a ragged last batch) with the convolutions in the native form (XLA's, here run on
// fpfast, whose cpubackend has the ops) and in the im2col form, and checks the losses and
// the parameters agree to float32 rounding: the two forms compute the same function and
// gradients, summed in other orders.
func TestNativeSessionMatchesIm2col(t *testing.T) {
	for _, spec := range nativeSpecs {
		sample := tensor.Size(spec.InputShape)
		x, y := randomData(rand.New(rand.NewPCG(5, 6)), 37, sample, spec.NumClasses)
		train := func(native bool) ([]float32, tensor.List) {
			m, err := newModelForm(CPUBackend, spec, true, native)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			s, err := m.NewSession(spec.Init(7), SGD{LR: 0.05, Momentum: 0.9, WeightDecay: 1e-3})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var losses []float32
			for epoch := range 2 {
				for lo := 0; lo < len(y); lo += 16 {
					hi := min(lo+16, len(y))
					l, err := s.Step(x[lo*sample:hi*sample], y[lo:hi])
					if err != nil {
						t.Fatalf("%s epoch %d: %v", spec.Arch, epoch, err)
					}
					losses = append(losses, l)
				}
			}
			p, err := s.Params()
			if err != nil {
				t.Fatal(err)
			}
			return losses, p
		}
		wantLoss, want := train(false)
		gotLoss, got := train(true)
		for i := range wantLoss {
			if d := math.Abs(float64(gotLoss[i] - wantLoss[i])); !(d <= 1e-5*math.Abs(float64(wantLoss[i]))+1e-6) {
				t.Errorf("%s %v: step %d loss %v native, %v im2col", spec.Arch, spec.InputShape, i, gotLoss[i], wantLoss[i])
			}
		}
		rel := relDist(got, want)
		t.Logf("%s %v: native parameters %.3g from im2col's after %d steps", spec.Arch, spec.InputShape, rel, len(wantLoss))
		if !(rel <= 1e-5) {
			t.Errorf("%s %v: native parameters %.3g from im2col's; want ≤ 1e-5", spec.Arch, spec.InputShape, rel)
		}
		if rel := relDist(want, spec.Init(7)); !(rel > 1e-3) {
			t.Fatalf("%s: training moved the parameters by %.3g only: the comparison is vacuous", spec.Arch, rel)
		}
	}
}

// TestNativeMultiSessionMatchesIm2col is TestNativeSessionMatchesIm2col for lockstep
// training: three clients with uneven data (idle and ragged batches), the native form's
// grouped convolutions (one group per client) against the im2col form's per-client GEMMs.
func TestNativeMultiSessionMatchesIm2col(t *testing.T) {
	for _, spec := range nativeSpecs {
		sample := tensor.Size(spec.InputShape)
		r := rand.New(rand.NewPCG(9, 9))
		sizes := []int{30, 13, 5}
		const batch = 8
		var xs [][]float32
		var ys [][]int32
		var inits []tensor.List
		for ci, n := range sizes {
			x, y := randomData(r, n, sample, spec.NumClasses)
			xs, ys = append(xs, x), append(ys, y)
			inits = append(inits, spec.Init(uint64(ci+11)))
		}
		train := func(native bool) ([][]float32, []tensor.List) {
			m, err := newModelForm(CPUBackend, spec, true, native)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ms, err := m.NewMultiSession(inits, SGD{LR: 0.05, Momentum: 0.9, WeightDecay: 1e-3})
			if err != nil {
				t.Fatal(err)
			}
			defer ms.Close()
			var losses [][]float32
			for step := range 4 {
				bx, by := make([][]float32, len(sizes)), make([][]int32, len(sizes))
				for ci, n := range sizes {
					if lo := step * batch; lo < n {
						hi := min(lo+batch, n)
						bx[ci], by[ci] = xs[ci][lo*sample:hi*sample], ys[ci][lo:hi]
					}
				}
				l, err := ms.Step(bx, by)
				if err != nil {
					t.Fatalf("%s step %d: %v", spec.Arch, step, err)
				}
				losses = append(losses, l)
			}
			p, err := ms.Params()
			if err != nil {
				t.Fatal(err)
			}
			return losses, p
		}
		wantLoss, want := train(false)
		gotLoss, got := train(true)
		for s := range wantLoss {
			for ci, w := range wantLoss[s] {
				g := gotLoss[s][ci]
				if math.IsNaN(float64(w)) != math.IsNaN(float64(g)) ||
					math.Abs(float64(g-w)) > 1e-5*math.Abs(float64(w))+1e-6 {
					t.Errorf("%s %v: step %d client %d loss %v native, %v im2col", spec.Arch, spec.InputShape, s, ci, g, w)
				}
			}
		}
		for ci := range sizes {
			rel := relDist(got[ci], want[ci])
			t.Logf("%s %v client %d: native parameters %.3g from im2col's", spec.Arch, spec.InputShape, ci, rel)
			if !(rel <= 1e-5) {
				t.Errorf("%s %v client %d: native parameters %.3g from im2col's; want ≤ 1e-5", spec.Arch, spec.InputShape, ci, rel)
			}
			if rel := relDist(want[ci], inits[ci]); !(rel > 1e-3) {
				t.Fatalf("%s client %d: training moved the parameters by %.3g only", spec.Arch, ci, rel)
			}
		}
	}
}

// graphOps builds net's training step on m's backend (batch b) and counts its node types.
func graphOps(t *testing.T, m *Model, b int) map[graph.NodeType]int {
	t.Helper()
	g := graph.NewGraph(m.backend, "ops")
	defer g.Finalize()
	var inputs []*graph.Node
	for range 2 {
		for _, s := range m.shapes {
			inputs = append(inputs, graph.Parameter(g, "", shapes.Make(dtypes.Float32, s...)))
		}
	}
	inputs = append(inputs,
		graph.Parameter(g, "", shapes.Make(dtypes.Float32, append([]int{b}, m.spec.InputShape...)...)),
		graph.Parameter(g, "", shapes.Make(dtypes.Int32, b)),
		graph.Parameter(g, "", shapes.Make(dtypes.Float32, 3)))
	trainStepGraph(m.net, inputs)
	count := map[graph.NodeType]int{}
	for _, n := range g.Nodes() {
		count[n.Type()]++
	}
	return count
}

// TestNativeGraphOps checks which graph each backend gets: the XLA backends the native
// form (two convolutions per layer backward and one forward, one reduce-window, its
// SelectAndScatter, no gathers or scatters), fpfast and fpcpu the im2col form with no
// native convolution or pooling op, whatever the model (their bits and keys rest on it).
func TestNativeGraphOps(t *testing.T) {
	spec := ModelSpec{Arch: ArchFedAvgCNN, InputShape: []int{9, 10, 2}, NumClasses: 5}
	for _, backend := range []string{CPUBackend, OracleBackend} {
		m, err := NewModel(backend, spec)
		if err != nil {
			t.Fatal(err)
		}
		if m.nativeConv {
			t.Errorf("%s: model takes the native form", backend)
		}
		ops := graphOps(t, m, 4)
		if ops[graph.NodeTypeConvGeneral]+ops[graph.NodeTypeReduceWindow]+ops[graph.NodeTypeSelectAndScatterMax] != 0 || ops[graph.NodeTypeGather] == 0 {
			t.Errorf("%s: im2col graph has %d ConvGeneral, %d ReduceWindow, %d SelectAndScatterMax, %d Gather",
				backend, ops[graph.NodeTypeConvGeneral], ops[graph.NodeTypeReduceWindow], ops[graph.NodeTypeSelectAndScatterMax], ops[graph.NodeTypeGather])
		}
		m.Close()
	}
	m, err := newModelForm(CPUBackend, spec, true, true)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ops := graphOps(t, m, 4)
	// conv1: forward and weight gradient; conv2: forward, weight and input gradients.
	if ops[graph.NodeTypeConvGeneral] != 5 || ops[graph.NodeTypeReduceWindow] != 2 || ops[graph.NodeTypeSelectAndScatterMax] != 2 ||
		ops[graph.NodeTypeGather]+ops[graph.NodeTypeScatterSum]+ops[graph.NodeTypeArgMinMax] != 0 {
		t.Errorf("native graph: %d ConvGeneral (want 5), %d ReduceWindow (2), %d SelectAndScatterMax (2), %d Gather, %d ScatterSum, %d ArgMax (0)",
			ops[graph.NodeTypeConvGeneral], ops[graph.NodeTypeReduceWindow], ops[graph.NodeTypeSelectAndScatterMax],
			ops[graph.NodeTypeGather], ops[graph.NodeTypeScatterSum], ops[graph.NodeTypeArgMinMax])
	}
}

// TestNativeInferenceMatchesIm2col checks the native form's other single-client graphs
// against the im2col form's at the same parameters: the gradient of one batch, the
// evaluation (loss sum and correct count), the logits and the penultimate features.
func TestNativeInferenceMatchesIm2col(t *testing.T) {
	for _, spec := range nativeSpecs {
		sample := tensor.Size(spec.InputShape)
		x, y := randomData(rand.New(rand.NewPCG(1, 2)), 21, sample, spec.NumClasses)
		params := spec.Init(3)
		type result struct {
			grad          tensor.List
			loss          float64
			correct       int
			logits, feats []float32
		}
		run := func(native bool) result {
			m, err := newModelForm(CPUBackend, spec, true, native)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			var r result
			if r.grad, err = m.Gradient(params, x, y); err != nil {
				t.Fatal(err)
			}
			if r.loss, r.correct, err = m.Evaluate(params, x, y, 8); err != nil {
				t.Fatal(err)
			}
			if r.logits, err = m.Logits(params, x, 8); err != nil {
				t.Fatal(err)
			}
			if r.feats, err = m.Features(params, x, 8); err != nil {
				t.Fatal(err)
			}
			return r
		}
		want, got := run(false), run(true)
		if rel := relDist(got.grad, want.grad); !(rel <= 1e-5) {
			t.Errorf("%s %v: native gradient %.3g from im2col's", spec.Arch, spec.InputShape, rel)
		}
		if math.Abs(got.loss-want.loss) > 1e-5*math.Abs(want.loss) || got.correct != want.correct {
			t.Errorf("%s %v: evaluation %v, %d correct native; %v, %d im2col", spec.Arch, spec.InputShape, got.loss, got.correct, want.loss, want.correct)
		}
		for name, pair := range map[string][2][]float32{"logits": {got.logits, want.logits}, "features": {got.feats, want.feats}} {
			rel := relDist(tensor.List{{Data: pair[0]}}, tensor.List{{Data: pair[1]}})
			if len(pair[0]) != len(pair[1]) || !(rel <= 1e-5) {
				t.Errorf("%s %v: native %s %.3g from im2col's", spec.Arch, spec.InputShape, name, rel)
			}
		}
	}
}
