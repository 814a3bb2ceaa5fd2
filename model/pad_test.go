package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// sameBits fails unless a and b hold the same tensors bit for bit.
func sameBits(t *testing.T, what string, a, b tensor.List) {
	t.Helper()
	for i := range a {
		for j := range a[i].Data {
			if math.Float32bits(a[i].Data[j]) != math.Float32bits(b[i].Data[j]) {
				t.Fatalf("%s: %s[%d] = %v padded, %v unpadded", what, a[i].Name, j, a[i].Data[j], b[i].Data[j])
			}
		}
	}
}

// TestPaddedBatchesAreExact runs the same ragged batches (sizes below and above the first
// one, as a federated run's clients give) through a model that pads them to one compiled
// batch size and through one that compiles every size, with plain, masked and proximal
// steps, and checks that losses, parameters and evaluations agree bit for bit, and that the
// padding model compiled one training graph per step variant.
func TestPaddedBatchesAreExact(t *testing.T) {
	for _, spec := range []ModelSpec{
		{Arch: ArchCNN4, InputShape: []int{16, 16, 2}, NumClasses: 5},
		{Arch: ArchMLP, InputShape: []int{12}, Hidden: []int{9}, NumClasses: 4},
		{Arch: ArchFedAvgCNN, InputShape: []int{9, 10, 2}, NumClasses: 5},
	} {
		t.Run(spec.Arch, func(t *testing.T) {
			sample := tensor.Size(spec.InputShape)
			sizes := []int{16, 7, 16, 1, 13, 16, 3, 9}
			run := func(pad bool) (params []tensor.List, losses []float32, evals []float64, m *Model) {
				m, err := newModel(CPUBackend, spec, pad)
				if err != nil {
					t.Fatal(err)
				}
				if m.PadsBatches() != pad {
					t.Fatalf("%s on %s: PadsBatches %v, want %v", spec.Arch, CPUBackend, m.PadsBatches(), pad)
				}
				r := rand.New(rand.NewPCG(4, 4))
				init := spec.Init(3)
				mask := spec.Init(5)
				for i := range mask {
					for j := range mask[i].Data {
						mask[i].Data[j] = float32(j % 2)
					}
				}
				for variant := range 3 {
					s, err := m.NewSession(init, SGD{LR: 0.05, Momentum: 0.7, WeightDecay: 1e-3})
					if err != nil {
						t.Fatal(err)
					}
					switch variant {
					case 1:
						err = s.SetMask(mask)
					case 2:
						err = s.SetProx(0.1, spec.Init(4))
					}
					if err != nil {
						t.Fatal(err)
					}
					for _, b := range sizes {
						x, y := randomData(r, b, sample, spec.NumClasses)
						l, err := s.Step(x, y)
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
					params = append(params, p)
					for _, n := range []int{1, 20, 37} {
						x, y := randomData(r, n, sample, spec.NumClasses)
						sum, correct, err := m.Evaluate(p, x, y, 16)
						if err != nil {
							t.Fatal(err)
						}
						logits, err := m.Logits(p, x, 16)
						if err != nil {
							t.Fatal(err)
						}
						if len(logits) != n*spec.NumClasses {
							t.Fatalf("Logits returned %d values for %d samples", len(logits), n)
						}
						evals = append(evals, sum, float64(correct))
						for _, v := range logits {
							evals = append(evals, float64(v))
						}
					}
				}
				return params, losses, evals, m
			}
			pp, pl, pe, pm := run(true)
			defer pm.Close()
			up, ul, ue, um := run(false)
			defer um.Close()
			for i := range pl {
				if math.Float32bits(pl[i]) != math.Float32bits(ul[i]) {
					t.Fatalf("step %d: loss %v padded, %v unpadded", i, pl[i], ul[i])
				}
			}
			for v := range pp {
				sameBits(t, "step variant", pp[v], up[v])
			}
			for i := range pe {
				if math.Float64bits(pe[i]) != math.Float64bits(ue[i]) {
					t.Fatalf("evaluation value %d: %v padded, %v unpadded", i, pe[i], ue[i])
				}
			}
			c := pm.Compilations()
			for _, name := range []string{"train", "train-masked", "train-prox"} {
				if c[name] != 1 {
					t.Errorf("padding model compiled %d %s graphs for batch sizes %v, want 1", c[name], name, sizes)
				}
			}
			if u := um.Compilations()["train"]; u != 6 {
				t.Errorf("unpadded model compiled %d train graphs, want one per distinct size (6)", u)
			}
			// Evaluation in batches of 16 (last batches of 1, 4 and 5 rows) runs in padded
			// chunks of evalChunk rows: one graph.
			if c["eval"] != 1 || c["logits"] != 1 {
				t.Errorf("padding model compiled %d eval and %d logits graphs, want 1 each", c["eval"], c["logits"])
			}
		})
	}
}

// TestPaddedEvaluationIsExact: for networks whose training is not padded (BatchNorm, tape
// networks), evaluation still runs in padded chunks, and Evaluate, Logits and Features give
// the same bits as one graph per batch size.
func TestPaddedEvaluationIsExact(t *testing.T) {
	for _, spec := range []ModelSpec{
		{Arch: ArchResNet18, InputShape: []int{8, 8, 3}, NumClasses: 3, Width: 4},
		{Arch: ArchResNet18ImageNet, InputShape: []int{13, 11, 2}, NumClasses: 4, Width: 2},
	} {
		t.Run(spec.Arch, func(t *testing.T) {
			sample := tensor.Size(spec.InputShape)
			params := spec.Init(2)
			run := func(pad bool) ([]float64, map[string]int) {
				m, err := newModel(CPUBackend, spec, pad)
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				if m.padEval != pad || m.PadsBatches() {
					t.Fatalf("pad %v: padEval %v, PadsBatches %v", pad, m.padEval, m.PadsBatches())
				}
				r := rand.New(rand.NewPCG(6, 6))
				var out []float64
				for _, n := range []int{1, 9, 70} {
					x, y := randomData(r, n, sample, spec.NumClasses)
					sum, correct, err := m.Evaluate(params, x, y, 32)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, sum, float64(correct))
					logits, err := m.Logits(params, x, 32)
					if err != nil {
						t.Fatal(err)
					}
					feats, err := m.Features(params, x, 32)
					if err != nil {
						t.Fatal(err)
					}
					for _, v := range append(logits, feats...) {
						out = append(out, float64(v))
					}
				}
				return out, m.Compilations()
			}
			got, c := run(true)
			want, _ := run(false)
			if len(got) != len(want) {
				t.Fatalf("%d values padded, %d unpadded", len(got), len(want))
			}
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("value %d: %v padded, %v unpadded", i, got[i], want[i])
				}
			}
			if c["eval"] != 1 || c["logits"] != 1 || c["features"] != 1 {
				t.Errorf("padding model compiled %v, want one eval, logits and features graph", c)
			}
		})
	}
}

// TestPaddedGradientsAreExact: Gradient, MixedGradient, TrainLogits and FeatureGradient
// (with an alignment penalty) of ragged batches
// (a federated run's last batches) on a model that pads them to the largest batch so far
// give the bits of a model that compiles every size, and the padding model compiles one
// graph for each.
func TestPaddedGradientsAreExact(t *testing.T) {
	for _, spec := range []ModelSpec{
		{Arch: ArchCNN4, InputShape: []int{16, 16, 2}, NumClasses: 5},
		{Arch: ArchMLP, InputShape: []int{12}, Hidden: []int{9}, NumClasses: 4},
		{Arch: ArchFedAvgCNN, InputShape: []int{9, 10, 2}, NumClasses: 5},
	} {
		t.Run(spec.Arch, func(t *testing.T) {
			sample := tensor.Size(spec.InputShape)
			sizes := []int{16, 7, 1, 13}
			type out struct {
				grad, mixed, feat tensor.List
				logits, feats     []float32
			}
			run := func(pad bool) ([]out, *Model) {
				m, err := newModel(CPUBackend, spec, pad)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(m.Close)
				if m.PadsBatches() != pad {
					t.Fatalf("PadsBatches %v, want %v", m.PadsBatches(), pad)
				}
				r := rand.New(rand.NewPCG(6, 6))
				params := spec.Init(7)
				var outs []out
				for _, b := range sizes {
					x, y := randomData(r, b, sample, spec.NumClasses)
					offset := make([]float32, b*spec.NumClasses)
					for i := range offset {
						offset[i] = float32(r.NormFloat64())
					}
					var o out
					if o.grad, err = m.Gradient(params, x, y); err != nil {
						t.Fatal(err)
					}
					if o.mixed, err = m.MixedGradient(params, x, y, 0.4, offset); err != nil {
						t.Fatal(err)
					}
					if o.logits, err = m.TrainLogits(params, x, y); err != nil {
						t.Fatal(err)
					}
					d := m.FeatureDim()
					targets, weights := make([]float32, b*d), make([]float32, b)
					for i := range targets {
						targets[i] = float32(r.NormFloat64())
					}
					for i := range weights {
						weights[i] = float32(i % 2)
					}
					var loss float32
					if o.feat, loss, o.feats, err = m.FeatureGradient(params, x, y, targets, weights, 0.3); err != nil {
						t.Fatal(err)
					}
					o.feat = append(o.feat, tensor.Tensor{Name: "loss", Data: []float32{loss}})
					if len(o.feats) != b*d {
						t.Fatalf("batch of %d: %d feature values", b, len(o.feats))
					}
					if len(o.logits) != b*spec.NumClasses {
						t.Fatalf("batch of %d: %d logits", b, len(o.logits))
					}
					outs = append(outs, o)
				}
				return outs, m
			}
			padded, pm := run(true)
			plain, um := run(false)
			for i, b := range sizes {
				what := fmt.Sprintf("batch %d of %d", i, b)
				sameBits(t, what+" gradient", padded[i].grad, plain[i].grad)
				sameBits(t, what+" mixed gradient", padded[i].mixed, plain[i].mixed)
				sameBits(t, what+" training logits", tensor.List{{Data: padded[i].logits}}, tensor.List{{Data: plain[i].logits}})
				sameBits(t, what+" feature gradient and loss", padded[i].feat, plain[i].feat)
				sameBits(t, what+" features", tensor.List{{Data: padded[i].feats}}, tensor.List{{Data: plain[i].feats}})
			}
			for _, name := range []string{"grad", "mixgrad", "trainlogits", "featgrad"} {
				if pm.compiles[name] != 1 || um.compiles[name] != len(sizes) {
					t.Errorf("%s: %d graphs padded, %d unpadded; want 1 and %d", name, pm.compiles[name], um.compiles[name], len(sizes))
				}
			}
		})
	}
}
