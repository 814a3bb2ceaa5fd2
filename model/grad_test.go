package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/gomlx"
)

// float64Params converts float32 parameters to float64 backend tensors.
func float64Tensors(params tensor.List) []*tensors.Tensor {
	out := make([]*tensors.Tensor, len(params))
	for i, p := range params {
		d := make([]float64, len(p.Data))
		for j, v := range p.Data {
			d[j] = float64(v)
		}
		out[i] = tensors.FromFlatDataAndDimensions(d, p.Shape...)
	}
	return out
}

// TestGradientFiniteDifferences checks the hand-written backward pass against central
// finite differences of the loss, in float64, on a few random entries of every parameter.
func TestGradientFiniteDifferences(t *testing.T) {
	cases := []struct {
		spec      ModelSpec
		batch     int
		zeroPatch bool // Blank out part of the image, as in MNIST: creates max-pool ties.
	}{
		{ModelSpec{Arch: ArchCNN4, InputShape: []int{16, 16, 1}, NumClasses: 3}, 3, true},
		{ModelSpec{Arch: ArchCNN4, InputShape: []int{17, 19, 2}, NumClasses: 4}, 2, false}, // Odd sizes: pooling floors.
		{ModelSpec{Arch: ArchMLP, InputShape: []int{3, 4}, NumClasses: 3, Hidden: []int{7, 5}}, 4, false},
		{ModelSpec{Arch: ArchLogReg, InputShape: []int{6}, NumClasses: 3}, 5, false},
		{ModelSpec{Arch: ArchFedAvgCNN, InputShape: []int{9, 8, 2}, NumClasses: 3}, 2, true}, // Padded convolutions, odd sizes.
	}
	backend, err := gomlx.Get("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s%v", tc.spec.Arch, tc.spec.InputShape), func(t *testing.T) {
			ls, err := tc.spec.layers()
			if err != nil {
				t.Fatal(err)
			}
			params := tc.spec.Init(7)
			n := len(params)
			exec, err := NewExec(backend, func(inputs []*Node) []*Node {
				loss, grads := lossAndGrads(ls, inputs[:n], inputs[n], inputs[n+1], 0)
				return append([]*Node{loss}, grads...)
			})
			if err != nil {
				t.Fatal(err)
			}
			defer exec.Finalize()
			r := rand.New(rand.NewPCG(3, 4))
			sample := tensor.Size(tc.spec.InputShape)
			x := make([]float64, tc.batch*sample)
			for i := range x {
				x[i] = r.NormFloat64()
			}
			if tc.zeroPatch {
				h, w := tc.spec.InputShape[0], tc.spec.InputShape[1]
				for b := range tc.batch {
					for i := range h / 2 {
						for j := range w {
							x[b*sample+i*w+j] = 0
						}
					}
				}
			}
			y := make([]int32, tc.batch)
			for i := range y {
				y[i] = int32(r.IntN(tc.spec.NumClasses))
			}
			dims := append([]int{tc.batch}, tc.spec.InputShape...)
			run := func(ps []*tensors.Tensor) []*tensors.Tensor {
				args := []any{}
				for _, p := range ps {
					args = append(args, p)
				}
				args = append(args, tensors.FromFlatDataAndDimensions(x, dims...), tensors.FromFlatDataAndDimensions(y, tc.batch))
				outs, err := exec.Exec(args...)
				if err != nil {
					t.Fatal(err)
				}
				return outs
			}
			base := float64Tensors(params)
			outs := run(base)
			for pi, p := range params {
				grad := tensors.MustCopyFlatData[float64](outs[1+pi])
				for trial := range 4 {
					idx := r.IntN(len(p.Data))
					if trial == 0 && p.Name == "conv1.bias" {
						idx = 0
					}
					const eps = 1e-6
					lossAt := func(delta float64) float64 {
						ps := float64Tensors(params)
						tensors.MustMutableFlatData[float64](ps[pi], func(flat []float64) { flat[idx] += delta })
						return tensors.ToScalar[float64](run(ps)[0])
					}
					fd := (lossAt(eps) - lossAt(-eps)) / (2 * eps)
					if diff := math.Abs(fd - grad[idx]); diff > 1e-6+1e-4*math.Abs(fd) {
						t.Errorf("%s[%d]: analytic gradient %.9g, finite differences %.9g", p.Name, idx, grad[idx], fd)
					}
				}
			}
		})
	}
}
