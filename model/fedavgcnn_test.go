package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/gomlx"
	"github.com/fedpipe/fedpipe/model/arch"
)

// fedAvgCNNTape is the definition fedavgcnn had on the tape (tape.go) before it became a
// chain of layers (ModelSpec.layers, with padded convolutions): conv5×5(32, pad 2) → ReLU →
// maxpool 2 → conv5×5(64, pad 2) → ReLU → maxpool 2 → flatten (h, w, c) → FC 512 → ReLU →
// classifier, every op the tape's generic one. It is the reference the chain is held to.
func fedAvgCNNTape(s ModelSpec) tapeNetwork {
	h, w, c := s.InputShape[0], s.InputShape[1], s.InputShape[2]
	var d defBuilder
	d.conv("conv1", arch.Kernel, c, arch.Conv1, true, false)
	d.conv("conv2", arch.Kernel, arch.Conv1, arch.Conv2, true, false)
	ph, pw := arch.PooledSide(arch.FedAvgCNN, h), arch.PooledSide(arch.FedAvgCNN, w)
	d.dense("fc1", ph*pw*arch.Conv2, arch.FC)
	tn := d.net(arch.FC, s.NumClasses, func(f *fwd, x *tv) *tv {
		z := f.t.maxPool(f.t.relu(f.conv("conv1", x, arch.Kernel, 1, arch.FedAvgPad, true)), 2, 2, 0)
		z = f.t.maxPool(f.t.relu(f.conv("conv2", z, arch.Kernel, 1, arch.FedAvgPad, true)), 2, 2, 0)
		b := z.n.Shape().Dimensions[0]
		return f.t.relu(f.t.dense(f.t.reshape(z, b, ph*pw*arch.Conv2), f.p("fc1.weight"), f.p("fc1.bias")))
	})
	return tapeNetwork{net: tn, inputShape: slices.Clone(s.InputShape)}
}

// TestFedAvgCNNMatchesTapeDefinition: fedavgcnn as a chain of layers is the network its tape
// definition was: the same parameter names and shapes, the same initial values bit for bit,
// and in float64 the same loss, gradients, logits and features up to rounding, on even and
// odd image sizes (pooling floors), one and three channels, and images with blank patches
// (MNIST's zeros: equal values in a pooling window, whose gradient both send to the
// window's first maximal element).
func TestFedAvgCNNMatchesTapeDefinition(t *testing.T) {
	backend, err := gomlx.Get("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		shape []int
		batch int
	}{{[]int{28, 28, 1}, 3}, {[]int{9, 7, 2}, 4}, {[]int{12, 12, 3}, 2}} {
		spec := ModelSpec{Arch: ArchFedAvgCNN, InputShape: tc.shape, NumClasses: 5}
		t.Run(fmt.Sprint(tc.shape), func(t *testing.T) {
			seq, err := spec.network()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := seq.(seqNet); !ok {
				t.Fatalf("fedavgcnn is a %T, want a seqNet", seq)
			}
			ref := fedAvgCNNTape(spec)
			names, shapes, err := spec.ParamShapes()
			if err != nil {
				t.Fatal(err)
			}
			if len(names) != len(ref.net.defs) {
				t.Fatalf("%d parameters, the tape definition has %d", len(names), len(ref.net.defs))
			}
			for i, d := range ref.net.defs {
				if names[i] != d.name || !slices.Equal(shapes[i], d.shape) {
					t.Fatalf("parameter %d is %s%v, the tape definition's %s%v", i, names[i], shapes[i], d.name, d.shape)
				}
			}
			params := spec.Init(11)
			for i, p := range initNetwork(ref, ArchFedAvgCNN, 11) {
				for j, v := range p.Data {
					if math.Float32bits(v) != math.Float32bits(params[i].Data[j]) {
						t.Fatalf("Init: %s[%d] = %g, the tape definition's %g", p.Name, j, params[i].Data[j], v)
					}
				}
			}

			r := rand.New(rand.NewPCG(5, uint64(tc.shape[0])))
			sample := tensor.Size(tc.shape)
			x := make([]float64, tc.batch*sample)
			for i := range x {
				x[i] = r.NormFloat64()
			}
			// Blank the top rows of the first image: equal conv outputs, ties in the pooling.
			for i := range min(sample, 4*tc.shape[1]*tc.shape[2]) {
				x[i] = 0
			}
			y := make([]int32, tc.batch)
			for i := range y {
				y[i] = int32(r.IntN(spec.NumClasses))
			}
			n := len(params)
			outputs := func(net network) [][]float64 {
				exec, err := NewExec(backend, func(inputs []*Node) []*Node {
					loss, grads, _ := net.trainPass(inputs[:n], inputs[n], inputs[n+1])
					return append(append([]*Node{loss}, grads...), net.evalLogits(inputs[:n], inputs[n]), net.(interface {
						evalFeatures(params []*Node, x *Node) *Node
					}).evalFeatures(inputs[:n], inputs[n]))
				})
				if err != nil {
					t.Fatal(err)
				}
				defer exec.Finalize()
				args := []any{}
				for _, p := range float64Tensors(params) {
					args = append(args, p)
				}
				dims := append([]int{tc.batch}, tc.shape...)
				args = append(args, tensors.FromFlatDataAndDimensions(x, dims...), tensors.FromFlatDataAndDimensions(y, tc.batch))
				outs, err := exec.Exec(args...)
				if err != nil {
					t.Fatal(err)
				}
				var vals [][]float64
				for _, o := range outs {
					vals = append(vals, tensors.MustCopyFlatData[float64](o))
				}
				return vals
			}
			got, want := outputs(seq), outputs(ref)
			what := append(append([]string{"loss"}, names...), "logits", "features")
			for i := range want {
				if len(got[i]) != len(want[i]) {
					t.Fatalf("%s: %d values, the tape definition's %d", what[i], len(got[i]), len(want[i]))
				}
				var scale, nonzero float64
				for _, v := range want[i] {
					scale = max(scale, math.Abs(v))
				}
				for j, v := range want[i] {
					if math.Abs(got[i][j]-v) > 1e-12*max(scale, 1e-300) {
						t.Fatalf("%s[%d] = %.17g, the tape definition's %.17g", what[i], j, got[i][j], v)
					}
					if v != 0 {
						nonzero++
					}
				}
				if nonzero == 0 {
					t.Fatalf("%s: all zero, nothing compared", what[i])
				}
			}
		})
	}
}
