package rng

import (
	"math"
	"testing"
)

func TestStreamsAreDeterministicAndIndependent(t *testing.T) {
	a, b := New(1, 2, 3, "shuffle"), New(1, 2, 3, "shuffle")
	for i := 0; i < 100; i++ {
		if a.Uint64() != b.Uint64() {
			t.Fatal("same arguments gave different streams")
		}
	}
	base := New(1, 2, 3, "shuffle").Uint64()
	for _, other := range []uint64{New(2, 2, 3, "shuffle").Uint64(), New(1, 3, 3, "shuffle").Uint64(),
		New(1, 2, 4, "shuffle").Uint64(), New(1, 2, 3, "init").Uint64()} {
		if other == base {
			t.Fatal("different arguments gave the same first number")
		}
	}
}

func TestGammaMoments(t *testing.T) {
	for _, shape := range []float64{0.1, 0.5, 1, 3.5} {
		r := New(7, 0, 0, "gamma")
		const n = 200000
		sum, sq := 0.0, 0.0
		for i := 0; i < n; i++ {
			x := Gamma(r, shape)
			sum += x
			sq += x * x
		}
		mean := sum / n
		variance := sq/n - mean*mean
		if math.Abs(mean-shape) > 0.03*math.Max(shape, 1) || math.Abs(variance-shape) > 0.08*math.Max(shape, 1) {
			t.Errorf("Gamma(%v): mean %.4f var %.4f, want both ≈ %v", shape, mean, variance, shape)
		}
	}
}

func TestDirichletSumsToOne(t *testing.T) {
	r := New(0, 0, 0, "dir")
	for _, alpha := range []float64{0.01, 0.1, 1, 10} {
		p := Dirichlet(r, alpha, 50)
		s := 0.0
		for _, v := range p {
			if v < 0 {
				t.Fatalf("negative proportion %v", v)
			}
			s += v
		}
		if math.Abs(s-1) > 1e-9 {
			t.Errorf("alpha %v: proportions sum to %v", alpha, s)
		}
	}
}
