package methods

import (
	"math"
	"math/rand/v2"
	"testing"
)

// lbfgs2 finds the minimum (0.3, 0.8) of (b0 − 0.3)² + 2(b1 − 0.8)² + (b0 − 0.3)(b1 − 0.8)
// (positive definite) from (0.5, 0.5) in 10 iterations.
func TestLBFGS2Quadratic(t *testing.T) {
	fn := func(b [2]float64) (float64, [2]float64, error) {
		u, v := b[0]-0.3, b[1]-0.8
		return u*u + 2*v*v + u*v, [2]float64{2*u + v, 4*v + u}, nil
	}
	x, err := lbfgs2(fn, [2]float64{0.5, 0.5}, 10, 1e-8)
	if err != nil || math.Abs(x[0]-0.3) > 1e-6 || math.Abs(x[1]-0.8) > 1e-6 {
		t.Fatalf("minimum at %v (%v), want (0.3, 0.8)", x, err)
	}
}

// jacobiEigen of a random symmetric 7×7 matrix: the eigenvectors are orthonormal and
// V·diag(λ)·Vᵀ gives the matrix back; a diagonal matrix keeps its entries as eigenvalues and
// the identity as eigenvectors; the input is not modified.
func TestJacobiEigen(t *testing.T) {
	const n = 7
	r := rand.New(rand.NewPCG(1, 2))
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := r.NormFloat64()
			a[i*n+j], a[j*n+i] = v, v
		}
	}
	in := append([]float64(nil), a...)
	vals, vecs := jacobiEigen(a, n)
	for i := range a {
		if a[i] != in[i] {
			t.Fatal("jacobiEigen modified its input")
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var dotV, back float64
			for k := 0; k < n; k++ {
				dotV += vecs[k*n+i] * vecs[k*n+j]
				back += vecs[i*n+k] * vals[k] * vecs[j*n+k]
			}
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(dotV-want) > 1e-9 || math.Abs(back-a[i*n+j]) > 1e-9 {
				t.Fatalf("(%d,%d): VᵀV %v (want %v), VΛVᵀ %v (want %v)", i, j, dotV, want, back, a[i*n+j])
			}
		}
	}
	d := []float64{3, 0, 0, -1}
	vals, vecs = jacobiEigen(d, 2)
	if vals[0] != 3 || vals[1] != -1 || vecs[0] != 1 || vecs[3] != 1 || vecs[1] != 0 || vecs[2] != 0 {
		t.Errorf("diagonal: values %v, vectors %v", vals, vecs)
	}
}
