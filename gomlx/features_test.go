package gomlx

import (
	"math"
	"math/rand/v2"
	"testing"
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
	g0, _, feats, err := m.FeatureGradient(params, x, y, targets, weights, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Gradient(params, x, y)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		for j := range want[i].Data {
			if math.Abs(float64(want[i].Data[j]-g0[i].Data[j])) > 1e-6 {
				t.Fatalf("%s[%d]: %v, Gradient says %v", want[i].Name, j, g0[i].Data[j], want[i].Data[j])
			}
		}
	}
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
