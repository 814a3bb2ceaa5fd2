package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive,staticcheck
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/gomlx"
)

func TestFeatureGradient(t *testing.T) {
	spec := ModelSpec{Arch: ArchMLP, InputShape: []int{4}, NumClasses: 3, Hidden: []int{6}}
	m, err := NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r := rand.New(rand.NewPCG(1, 2))
	params := spec.Init(7)
	x, y := randomData(r, 5, 4, 3)
	d := m.FeatureDim()
	if d != 6 {
		t.Fatalf("FeatureDim = %d, want 6", d)
	}
	targets := make([]float32, 5*d)
	for i := range targets {
		targets[i] = r.Float32()
	}
	weights := []float32{1, 0, 1, 1, 1}

	// λ = 0: the plain cross-entropy gradient.
	feats := lambdaZeroIsGradient(t, m, params, x, y, targets, weights)
	f2, err := m.Features(params, x, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range feats {
		if feats[i] != f2[i] {
			t.Fatalf("Features and FeatureGradient disagree at %d: %v vs %v", i, f2[i], feats[i])
		}
	}

	// λ > 0: the directional derivative along the gradient matches central differences.
	const lambda = 0.7
	g, loss, _, err := m.FeatureGradient(params, x, y, targets, weights, lambda)
	if err != nil {
		t.Fatal(err)
	}
	lossAt := func(eps float32) float64 {
		p := params.Clone()
		for i := range p {
			for j := range p[i].Data {
				p[i].Data[j] += eps * g[i].Data[j]
			}
		}
		_, l, _, err := m.FeatureGradient(p, x, y, targets, weights, lambda)
		if err != nil {
			t.Fatal(err)
		}
		return float64(l)
	}
	if l0 := lossAt(0); math.Abs(l0-float64(loss)) > 1e-6 {
		t.Fatalf("loss %v, recomputed %v", loss, l0)
	}
	norm2 := 0.0
	for _, gt := range g {
		for _, v := range gt.Data {
			norm2 += float64(v) * float64(v)
		}
	}
	const eps = 1e-3
	fd := (lossAt(eps) - lossAt(-eps)) / (2 * eps)
	if math.Abs(fd-norm2) > 0.02*norm2 {
		t.Errorf("directional derivative %v, |g|^2 = %v", fd, norm2)
	}
	// The penalty's own contribution: with weights all zero the loss drops to the cross-entropy.
	_, lz, _, err := m.FeatureGradient(params, x, y, targets, make([]float32, 5), lambda)
	if err != nil {
		t.Fatal(err)
	}
	pen := 0.0
	for b := 0; b < 5; b++ {
		for k := 0; k < d; k++ {
			diff := float64(feats[b*d+k] - targets[b*d+k])
			pen += float64(weights[b]) * diff * diff
		}
	}
	if got := float64(loss - lz); math.Abs(got-lambda*pen/5) > 1e-4 {
		t.Errorf("penalty %v, want %v", got, lambda*pen/5)
	}
}

// randomizeBatchNorm gives every BatchNorm tensor (γ, β, running mean and variance) a
// random value in [0.5, 1.5), so that neither mode of BatchNorm is trivial.
func randomizeBatchNorm(r *rand.Rand, params tensor.List) {
	for _, p := range params {
		if strings.Contains(p.Name, "bn") || strings.Contains(p.Name, "downsample.1") {
			for i := range p.Data {
				p.Data[i] = float32(0.5 + r.Float64())
			}
		}
	}
}

// TestFeatureGradientFiniteDifferences checks featureGradGraph's gradient of
// CE + λ/B·Σ w_b‖f_b − t_b‖² (λ > 0, one sample unaligned) against central finite
// differences of its loss, in float64, on random entries of every trained tensor, for
// every kind of network (the tape networks in training mode, at reduced width).
func TestFeatureGradientFiniteDifferences(t *testing.T) {
	cases := []struct {
		spec  ModelSpec
		batch int
	}{
		{ModelSpec{Arch: ArchResNet18, InputShape: []int{8, 8, 3}, NumClasses: 3, Width: 2}, 3},
		{ModelSpec{Arch: ArchResNet18ImageNet, InputShape: []int{13, 11, 2}, NumClasses: 4, Width: 2}, 2},
		{ModelSpec{Arch: ArchFedAvgCNN, InputShape: []int{9, 8, 2}, NumClasses: 3}, 3},
		{ModelSpec{Arch: ArchCNN4, InputShape: []int{16, 16, 1}, NumClasses: 3}, 3},
		{ModelSpec{Arch: ArchMLP, InputShape: []int{3, 4}, NumClasses: 3, Hidden: []int{7, 5}}, 4},
		{ModelSpec{Arch: ArchLogReg, InputShape: []int{6}, NumClasses: 3}, 4},
	}
	backend, err := gomlx.Get("")
	if err != nil {
		t.Fatal(err)
	}
	const lambda = 0.7
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s%v", tc.spec.Arch, tc.spec.InputShape), func(t *testing.T) {
			net, err := tc.spec.network()
			if err != nil {
				t.Fatal(err)
			}
			fn, ok := net.(featureNetwork)
			if !ok {
				t.Fatalf("%T is not a featureNetwork", net)
			}
			r := rand.New(rand.NewPCG(5, 6))
			params := tc.spec.Init(7)
			randomizeBatchNorm(r, params)
			n, d, b := len(params), fn.featureDim(), tc.batch
			exec, err := NewExec(backend, func(inputs []*Node) []*Node { return featureGradGraph(fn, inputs) })
			if err != nil {
				t.Fatal(err)
			}
			defer exec.Finalize()
			sample := tensor.Size(tc.spec.InputShape)
			x := make([]float64, b*sample)
			for i := range x {
				x[i] = r.NormFloat64()
			}
			y := make([]int32, b)
			for i := range y {
				y[i] = int32(r.IntN(tc.spec.NumClasses))
			}
			targets := make([]float64, b*d)
			for i := range targets {
				targets[i] = r.Float64()
			}
			weights := make([]float64, b)
			for i := range weights {
				weights[i] = 0.5 + r.Float64()
			}
			weights[1] = 0
			dims := append([]int{b}, tc.spec.InputShape...)
			run := func(ps []*tensors.Tensor) []*tensors.Tensor {
				args := []any{}
				for _, p := range ps {
					args = append(args, p)
				}
				args = append(args, tensors.FromFlatDataAndDimensions(x, dims...), tensors.FromFlatDataAndDimensions(y, b),
					tensors.FromFlatDataAndDimensions(targets, b, d), tensors.FromFlatDataAndDimensions(weights, b),
					tensors.FromFlatDataAndDimensions([]float64{lambda}, 1))
				outs, err := exec.Exec(args...)
				if err != nil {
					t.Fatal(err)
				}
				return outs
			}
			outs := run(float64Tensors(params))
			// The penalty is the one of the returned features: λ = 0 removes exactly it.
			feats := tensors.MustCopyFlatData[float64](outs[n+1])
			if len(feats) != b*d {
				t.Fatalf("%d features, want %d×%d", len(feats), b, d)
			}
			pen := 0.0
			for s := range b {
				for k := range d {
					diff := feats[s*d+k] - targets[s*d+k]
					pen += weights[s] * diff * diff
				}
			}
			ps0 := float64Tensors(params)
			args := []any{}
			for _, p := range ps0 {
				args = append(args, p)
			}
			ce, err := exec.Exec(append(args, tensors.FromFlatDataAndDimensions(x, dims...), tensors.FromFlatDataAndDimensions(y, b),
				tensors.FromFlatDataAndDimensions(targets, b, d), tensors.FromFlatDataAndDimensions(weights, b),
				tensors.FromFlatDataAndDimensions([]float64{0}, 1))...)
			if err != nil {
				t.Fatal(err)
			}
			loss, ceLoss := tensors.ToScalar[float64](outs[n]), tensors.ToScalar[float64](ce[n])
			if got, want := loss-ceLoss, lambda*pen/float64(b); math.Abs(got-want) > 1e-9*(1+want) {
				t.Errorf("penalty %.12g, want λ/B·Σ w‖f−t‖² = %.12g", got, want)
			}
			checked := 0
			for pi, p := range params {
				grad := tensors.MustCopyFlatData[float64](outs[pi])
				if IsRunningStat(p.Name) {
					for i, g := range grad {
						if g != 0 {
							t.Fatalf("%s[%d]: gradient %v of a running statistic", p.Name, i, g)
						}
					}
					continue
				}
				for range 3 {
					idx := r.IntN(len(p.Data))
					const eps = 1e-6
					lossAt := func(delta float64) float64 {
						ps := float64Tensors(params)
						tensors.MustMutableFlatData[float64](ps[pi], func(flat []float64) { flat[idx] += delta })
						return tensors.ToScalar[float64](run(ps)[n])
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

// TestTapeFeatures checks the tape networks' features through Model: their dimension is
// the classifier's input; Features are evaluation-mode (independent of how samples are
// batched) and are the classifier's input, since features·W + b reproduces Evaluate's
// cross-entropy and accuracy computed in Go; FeatureGradient with λ = 0 is Gradient,
// zeros for the running statistics included.
func TestTapeFeatures(t *testing.T) {
	for _, tc := range []struct {
		spec ModelSpec
		d    int
	}{
		{ModelSpec{Arch: ArchResNet18, InputShape: []int{8, 8, 3}, NumClasses: 3, Width: 2}, 16},
		{ModelSpec{Arch: ArchResNet18ImageNet, InputShape: []int{13, 11, 2}, NumClasses: 4, Width: 3}, 24},
		{ModelSpec{Arch: ArchFedAvgCNN, InputShape: []int{9, 8, 2}, NumClasses: 3}, 512},
	} {
		t.Run(tc.spec.Arch, func(t *testing.T) {
			m, err := NewModel("", tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if !m.HasFeatures() || m.FeatureDim() != tc.d {
				t.Fatalf("HasFeatures %v, FeatureDim %d, want %d", m.HasFeatures(), m.FeatureDim(), tc.d)
			}
			r := rand.New(rand.NewPCG(8, 9))
			params := tc.spec.Init(3)
			randomizeBatchNorm(r, params)
			const n = 5
			k, d := tc.spec.NumClasses, tc.d
			x, y := randomData(r, n, tensor.Size(tc.spec.InputShape), k)
			feats, err := m.Features(params, x, n)
			if err != nil {
				t.Fatal(err)
			}
			one, err := m.Features(params, x, 1)
			if err != nil {
				t.Fatal(err)
			}
			for i := range feats {
				if math.Abs(float64(feats[i]-one[i])) > 1e-5*(1+math.Abs(float64(feats[i]))) {
					t.Fatalf("features depend on the batch (not evaluation mode): %v batched, %v alone", feats[i], one[i])
				}
				if feats[i] < 0 {
					t.Fatalf("feature %d = %v: negative after ReLU", i, feats[i])
				}
			}
			wt, bt := params[params.Find("classifier.weight")], params[params.Find("classifier.bias")]
			if wt.Shape[0] != d {
				t.Fatalf("classifier.weight %v, want %d inputs", wt.Shape, d)
			}
			sum, correct := 0.0, 0
			for s := range n {
				logits := make([]float64, k)
				for c := range k {
					logits[c] = float64(bt.Data[c])
					for j := range d {
						logits[c] += float64(feats[s*d+j]) * float64(wt.Data[j*k+c])
					}
				}
				best, lse := 0, 0.0
				for c := range k {
					if logits[c] > logits[best] {
						best = c
					}
				}
				for c := range k {
					lse += math.Exp(logits[c] - logits[best])
				}
				sum += math.Log(lse) + logits[best] - logits[y[s]]
				if best == int(y[s]) {
					correct++
				}
			}
			gotSum, gotCorrect, err := m.Evaluate(params, x, y, n)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(gotSum-sum) > 1e-4*(1+sum) || gotCorrect != correct {
				t.Errorf("Evaluate: loss %v, %d correct; features·W + b: %v, %d", gotSum, gotCorrect, sum, correct)
			}

			targets := make([]float32, n*d)
			for i := range targets {
				targets[i] = r.Float32()
			}
			weights := []float32{1, 0, 1, 1, 1}
			lambdaZeroIsGradient(t, m, params, x, y, targets, weights)
		})
	}
	// The real ResNet-18 has 512 features (nothing is compiled to read the dimension).
	for _, arch := range []string{ArchResNet18, ArchResNet18ImageNet} {
		m, err := NewModel("", ModelSpec{Arch: arch, InputShape: []int{32, 32, 3}, NumClasses: 10})
		if err != nil {
			t.Fatal(err)
		}
		if m.FeatureDim() != 512 {
			t.Errorf("%s: FeatureDim %d, want 512", arch, m.FeatureDim())
		}
		m.Close()
	}
}

// lambdaZeroIsGradient checks that FeatureGradient with λ = 0 is Gradient (same names,
// values within 1e-6, zero for running statistics) and returns its features.
func lambdaZeroIsGradient(t *testing.T, m *Model, params tensor.List, x []float32, y []int32, targets, weights []float32) []float32 {
	t.Helper()
	g0, _, feats, err := m.FeatureGradient(params, x, y, targets, weights, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Gradient(params, x, y)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if g0[i].Name != want[i].Name {
			t.Fatalf("gradient %d is %s, Gradient's %s", i, g0[i].Name, want[i].Name)
		}
		for j := range want[i].Data {
			if math.Abs(float64(want[i].Data[j]-g0[i].Data[j])) > 1e-6 {
				t.Fatalf("%s[%d]: %v, Gradient says %v", want[i].Name, j, g0[i].Data[j], want[i].Data[j])
			}
			if IsRunningStat(want[i].Name) && g0[i].Data[j] != 0 {
				t.Fatalf("%s[%d]: gradient %v of a running statistic", want[i].Name, j, g0[i].Data[j])
			}
		}
	}
	return feats
}
