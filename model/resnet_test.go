package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/gomlx"
)

// TestTapeGradientFiniteDifferences checks the tape networks' backward passes (ResNet-18
// with BatchNorm in training mode and frozen (FrozenBN), strided and padded convolutions, the padded max-pool)
// against central finite differences of the loss, in float64, on a few
// random entries of every trained tensor. Widths are reduced to keep it fast.
func TestTapeGradientFiniteDifferences(t *testing.T) {
	cases := []struct {
		spec  ModelSpec
		batch int
	}{
		{ModelSpec{Arch: ArchResNet18, InputShape: []int{8, 8, 3}, NumClasses: 3, Width: 2}, 3},
		{ModelSpec{Arch: ArchResNet18ImageNet, InputShape: []int{13, 11, 2}, NumClasses: 4, Width: 2}, 2},
		{ModelSpec{Arch: ArchResNet18, InputShape: []int{8, 8, 3}, NumClasses: 3, Width: 2, FrozenBN: true}, 3},
	}
	backend, err := gomlx.Get("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s%v", tc.spec.Arch, tc.spec.InputShape), func(t *testing.T) {
			net, err := tc.spec.network()
			if err != nil {
				t.Fatal(err)
			}
			params := tc.spec.Init(7)
			// Random BatchNorm affine parameters and statistics, so that nothing is trivial.
			r := rand.New(rand.NewPCG(3, 4))
			for _, p := range params {
				if strings.Contains(p.Name, "bn") || strings.Contains(p.Name, "downsample.1") {
					for i := range p.Data {
						p.Data[i] = float32(0.5 + r.Float64())
					}
				}
			}
			n := len(params)
			exec, err := NewExec(backend, func(inputs []*Node) []*Node {
				loss, grads, _ := net.trainPass(inputs[:n], inputs[n], inputs[n+1])
				out := []*Node{loss}
				for i, g := range grads {
					if g == nil {
						g = ZerosLike(inputs[i])
					}
					out = append(out, g)
				}
				return out
			})
			if err != nil {
				t.Fatal(err)
			}
			defer exec.Finalize()
			sample := tensor.Size(tc.spec.InputShape)
			x := make([]float64, tc.batch*sample)
			for i := range x {
				x[i] = r.NormFloat64()
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
			outs := run(float64Tensors(params))
			checked := 0
			for pi, p := range params {
				grad := tensors.MustCopyFlatData[float64](outs[1+pi])
				if IsRunningStat(p.Name) {
					continue
				}
				for range 3 {
					idx := r.IntN(len(p.Data))
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
					checked++
				}
			}
			if checked == 0 {
				t.Fatal("no gradient checked")
			}
		})
	}
}

// TestBatchNormHandComputed compares the BatchNorm op with PyTorch's formulas computed by
// hand in float64: the forward pass with batch statistics, the running-statistics update
// (momentum 0.1, unbiased variance), the backward pass for an arbitrary upstream gradient,
// and the evaluation forward with running statistics.
func TestBatchNormHandComputed(t *testing.T) {
	const n, c = 6, 2 // x is [2, 1, 3, 2]: 6 values per channel.
	x := []float64{0.3, -1.2, 2.0, 0.5, -0.7, 0.9, 1.1, -0.4, 0.0, 2.2, -1.5, 0.1}
	dy := []float64{0.2, -0.1, 0.4, 0.3, -0.6, 0.05, 0.1, 0.7, -0.3, -0.2, 0.5, 0.9}
	gamma, beta := []float64{1.5, -0.7}, []float64{0.2, 0.1}
	rm, rv := []float64{0.4, -0.3}, []float64{2.0, 0.5}

	// Hand computation.
	wantY, wantDX := make([]float64, len(x)), make([]float64, len(x))
	wantEval := make([]float64, len(x))
	var wantRM, wantRV, wantDG, wantDB [c]float64
	for ch := range c {
		mean, v := 0.0, 0.0
		for i := range n {
			mean += x[i*c+ch]
		}
		mean /= n
		for i := range n {
			d := x[i*c+ch] - mean
			v += d * d
		}
		v /= n
		inv := 1 / math.Sqrt(v+1e-5)
		wantRM[ch] = 0.9*rm[ch] + 0.1*mean
		wantRV[ch] = 0.9*rv[ch] + 0.1*v*n/(n-1)
		xhat := make([]float64, n)
		sumD, sumDX := 0.0, 0.0
		for i := range n {
			xhat[i] = (x[i*c+ch] - mean) * inv
			wantY[i*c+ch] = gamma[ch]*xhat[i] + beta[ch]
			wantEval[i*c+ch] = gamma[ch]*(x[i*c+ch]-rm[ch])/math.Sqrt(rv[ch]+1e-5) + beta[ch]
			wantDB[ch] += dy[i*c+ch]
			wantDG[ch] += dy[i*c+ch] * xhat[i]
			sumD += dy[i*c+ch] * gamma[ch]
			sumDX += dy[i*c+ch] * gamma[ch] * xhat[i]
		}
		for i := range n {
			wantDX[i*c+ch] = inv / n * (n*dy[i*c+ch]*gamma[ch] - sumD - xhat[i]*sumDX)
		}
	}

	backend, err := gomlx.Get("")
	if err != nil {
		t.Fatal(err)
	}
	exec, err := NewExec(backend, func(in []*Node) []*Node {
		tp := &tape{record: true}
		xv := &tv{n: in[0], needGrad: true}
		g, b := &tv{n: in[1], needGrad: true}, &tv{n: in[2], needGrad: true}
		y, m, v := tp.batchNorm(xv, g, b, in[3], in[4])
		y.g = in[5]
		tp.backward()
		ev, _, _ := (&tape{}).batchNorm(&tv{n: in[0]}, &tv{n: in[1]}, &tv{n: in[2]}, in[3], in[4])
		return []*Node{y.n, m, v, xv.g, g.g, b.g, ev.n}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	outs, err := exec.Exec(tensors.FromFlatDataAndDimensions(x, 2, 1, 3, c),
		tensors.FromFlatDataAndDimensions(gamma, c), tensors.FromFlatDataAndDimensions(beta, c),
		tensors.FromFlatDataAndDimensions(rm, c), tensors.FromFlatDataAndDimensions(rv, c),
		tensors.FromFlatDataAndDimensions(dy, 2, 1, 3, c))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]float64{wantY, wantRM[:], wantRV[:], wantDX, wantDG[:], wantDB[:], wantEval} {
		got := tensors.MustCopyFlatData[float64](outs[i])
		for j := range want {
			if math.Abs(got[j]-want[j]) > 1e-12 {
				t.Errorf("output %d [%d]: got %.15g, want %.15g", i, j, got[j], want[j])
			}
		}
	}
}

// TestRunningStatsFollowPyTorch trains a small ResNet-18 with learning rate 0 (weights
// fixed, so every batch has the same statistics s): PyTorch's running mean after k steps
// is (1 − 0.9^k)·s, so the second step's value is 1.9× the first's; the variance goes
// 1 → 0.9 + 0.1·u → 0.81 + 0.19·u. The same must hold under an all-zero mask with weight
// decay (which freeze every trained entry but not the statistics), and Gradient must
// report zero for the statistics.
func TestRunningStatsFollowPyTorch(t *testing.T) {
	spec := ModelSpec{Arch: ArchResNet18, InputShape: []int{6, 6, 3}, NumClasses: 3, Width: 2}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	params := spec.Init(1)
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, 4*6*6*3)
	for i := range x {
		x[i] = float32(r.NormFloat64() + 0.5)
	}
	y := []int32{0, 1, 2, 1}
	twoSteps := func(opt SGD, mask tensor.List) (first, second tensor.List) {
		s, err := m.NewSession(params, opt)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if mask != nil {
			if err := s.SetMask(mask); err != nil {
				t.Fatal(err)
			}
		}
		var out [2]tensor.List
		for i := range out {
			if _, err := s.Step(x, y); err != nil {
				t.Fatal(err)
			}
			if out[i], err = s.Params(); err != nil {
				t.Fatal(err)
			}
		}
		return out[0], out[1]
	}
	zeroMask := make(tensor.List, len(params))
	for i, p := range params {
		zeroMask[i] = tensor.New(p.Name, p.Shape...)
	}
	for _, tc := range []struct {
		name string
		opt  SGD
		mask tensor.List
	}{{"lr0", SGD{}, nil}, {"masked+wd", SGD{LR: 0.1, Momentum: 0.9, WeightDecay: 0.5}, zeroMask}} {
		first, second := twoSteps(tc.opt, tc.mask)
		stats := 0
		for i, p := range params {
			a, b := first[i].Data, second[i].Data
			switch {
			case strings.HasSuffix(p.Name, ".running_mean"):
				stats++
				for j := range a {
					if math.Abs(float64(b[j]-1.9*a[j])) > 1e-5*(1+math.Abs(float64(a[j]))) {
						t.Fatalf("%s: %s[%d] went %v → %v, want ×1.9", tc.name, p.Name, j, a[j], b[j])
					}
				}
			case strings.HasSuffix(p.Name, ".running_var"):
				for j := range a {
					u1, u2 := (float64(a[j])-0.9)/0.1, (float64(b[j])-0.81)/0.19
					if math.Abs(u1-u2) > 1e-4*(1+math.Abs(u1)) || u1 < 0 {
						t.Fatalf("%s: %s[%d] went %v → %v: batch variances %v and %v differ", tc.name, p.Name, j, a[j], b[j], u1, u2)
					}
				}
			default:
				if !slices.Equal(p.Data, b) {
					t.Fatalf("%s: trained tensor %s moved", tc.name, p.Name)
				}
			}
		}
		if stats != 20 { // stem + 16 block BatchNorms + 3 projections
			t.Errorf("%s: %d BatchNorms, want 20", tc.name, stats)
		}
	}
	g, err := m.Gradient(params, x, y)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range g {
		if IsRunningStat(p.Name) && slices.ContainsFunc(p.Data, func(v float32) bool { return v != 0 }) {
			t.Errorf("gradient of %s is not zero", p.Name)
		}
	}
}

// TestResNetShapes pins the parameter list of ResNet-18 against torchvision's: 62 tensors
// (without num_batches_tracked) and 11,689,512 trained values with 1000 classes.
func TestResNetShapes(t *testing.T) {
	spec := ModelSpec{Arch: ArchResNet18ImageNet, InputShape: []int{224, 224, 3}, NumClasses: 1000}
	names, shapes, err := spec.ParamShapes()
	if err != nil {
		t.Fatal(err)
	}
	trained, total := 0, 0
	for i, name := range names {
		total++
		if !IsRunningStat(name) {
			trained += tensor.Size(shapes[i])
		}
	}
	if total != 102 || trained != 11689512 {
		t.Errorf("%d tensors, %d trained values; want 102 (62 trained, 40 running statistics) and 11689512", total, trained)
	}
	want := map[string][]int{
		"conv1.weight":                       {7, 7, 3, 64},
		"layer2.0.downsample.0.weight":       {1, 1, 64, 128},
		"layer4.1.bn2.running_var":           {512},
		"classifier.weight":                  {512, 1000},
		"layer3.0.conv1.weight":              {3, 3, 128, 256},
		"layer1.0.downsample.0.weight":       nil, // no projection in stage 1
		"layer1.1.bn1.running_mean":          {64},
		"layer2.0.downsample.1.running_mean": {128},
	}
	for name, shape := range want {
		i := slices.Index(names, name)
		if shape == nil {
			if i >= 0 {
				t.Errorf("%s should not exist", name)
			}
			continue
		}
		if i < 0 || !slices.Equal(shapes[i], shape) {
			t.Errorf("%s: index %d, want shape %v", name, i, shape)
		}
	}
	cifar := ModelSpec{Arch: ArchResNet18, InputShape: []int{32, 32, 3}, NumClasses: 10}
	_, cs, err := cifar.ParamShapes()
	if err != nil || !slices.Equal(cs[0], []int{3, 3, 3, 64}) {
		t.Errorf("CIFAR stem %v (%v), want [3 3 3 64]", cs, err)
	}
	stats, affine, err := cifar.BatchNormParams()
	if err != nil || len(stats) != 40 || len(affine) != 40 || affine[0] != "bn1.weight" || stats[1] != "bn1.running_var" {
		t.Errorf("BatchNormParams: %d stats, %d affine (%v)", len(stats), len(affine), err)
	}
}

// TestResNetInit: torchvision's initialization — convolutions N(0, 2/(k·k·cout)),
// BatchNorm γ = 1, β = 0, running mean 0 and variance 1, the classifier PyTorch's Linear
// default — and the same bits for the same seed.
func TestResNetInit(t *testing.T) {
	spec := ModelSpec{Arch: ArchResNet18, InputShape: []int{32, 32, 3}, NumClasses: 10}
	a, b := spec.Init(3), spec.Init(3)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different initializations")
	}
	for _, p := range a {
		switch {
		case strings.HasSuffix(p.Name, "running_var") || (strings.HasSuffix(p.Name, ".weight") && len(p.Shape) == 1):
			if slices.ContainsFunc(p.Data, func(v float32) bool { return v != 1 }) {
				t.Errorf("%s: want all ones", p.Name)
			}
		case len(p.Shape) == 1 && p.Name != "classifier.bias":
			if slices.ContainsFunc(p.Data, func(v float32) bool { return v != 0 }) {
				t.Errorf("%s: want all zeros", p.Name)
			}
		case len(p.Shape) == 4:
			want := math.Sqrt(2 / float64(p.Shape[0]*p.Shape[1]*p.Shape[3]))
			ss := 0.0
			for _, v := range p.Data {
				ss += float64(v) * float64(v)
			}
			if std := math.Sqrt(ss / float64(len(p.Data))); math.Abs(std-want) > 0.1*want {
				t.Errorf("%s: std %.4g, want %.4g", p.Name, std, want)
			}
		default: // classifier
			bound := 1 / math.Sqrt(512)
			if slices.ContainsFunc(p.Data, func(v float32) bool { return math.Abs(float64(v)) > bound }) {
				t.Errorf("%s: values beyond ±%.4g", p.Name, bound)
			}
		}
	}
}
