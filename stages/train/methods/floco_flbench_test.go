package methods

import (
	"math"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/rng"
)

func near(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

// The projection onto {β ≥ 0, Σβ = z}, by hand for v = (0.5, 0.2, −0.1). z = 1: the
// running sums minus z are −0.5, −0.3, −0.4, and every sorted entry exceeds (sum − z)/j, so
// θ = −0.4/3 and β = v + 0.4/3 = (19/30, 10/30, 1/30). z = 0.5: the sums minus z are 0,
// 0.2, 0.1; the third entry −0.1 is below 0.1/3, so θ = 0.2/2 = 0.1 and β = (0.4, 0.1, 0).
func TestFLOCOFLBenchSimplexProjection(t *testing.T) {
	v := []float64{0.5, 0.2, -0.1}
	if got := projectOntoSimplexZ(v, 1); !near(got, []float64{19.0 / 30, 10.0 / 30, 1.0 / 30}, 1e-12) {
		t.Errorf("z = 1: %v", got)
	}
	if got := projectOntoSimplexZ(v, 0.5); !near(got, []float64{0.4, 0.1, 0}, 1e-12) {
		t.Errorf("z = 0.5: %v", got)
	}
}

// Riesz energy, s = 2, of (1, 0), (0, 1), (½, ½): pair distances √2, √½, √½, so 1/d² =
// ½, 2, 2 and the log of their mean is log 1.5.
func TestFLOCOFLBenchRieszEnergy(t *testing.T) {
	got := rieszLogEnergy([][]float64{{1, 0}, {0, 1}, {0.5, 0.5}})
	if math.Abs(got-math.Log(1.5)) > 1e-12 {
		t.Errorf("log energy %v, want log 1.5 = %v", got, math.Log(1.5))
	}
}

// PCA scores of (7, 0), (3, 0), (5, 1), (5, −1): centered (2, 0), (−2, 0), (0, 1), (0, −1),
// whose components are the axes (variances 8 and 2), so the scores are the centered
// coordinates, with the sign that makes each axis's loading positive. Mirroring the first
// feature flips the first score.
func TestFLOCOFLBenchPCA(t *testing.T) {
	got := pcaScores([][]float64{{7, 0}, {3, 0}, {5, 1}, {5, -1}}, 2)
	want := [][]float64{{2, 0}, {-2, 0}, {0, 1}, {0, -1}}
	for i := range want {
		if !near(got[i], want[i], 1e-9) {
			t.Fatalf("scores %v, want %v", got, want)
		}
	}
	got = pcaScores([][]float64{{-7, 0}, {-3, 0}, {-5, 1}, {-5, -1}}, 1)
	for i, w := range []float64{-2, 2, 0, 0} {
		if math.Abs(got[i][0]-w) > 1e-9 {
			t.Fatalf("mirrored scores %v", got)
		}
	}
}

// Two clients with trained weights (1, 0, 0) and (0, 0, 3): centered (½, 0, −1.5) and (−½, 0, 1.5); the
// component, with its largest loading (the third feature) positive, is ∝ (−½, 0, 1.5), so
// client 0 scores −a and client 1 +a, a = √2.5 > 1, the second component 0. Projected
// onto the z-simplex, (a, 0) → (z, 0) and (−a, 0) → (0, z) for every z ≤ 1: renormalized,
// client 0 sits at (0, 1) and client 1 at (1, 0).
func TestFLOCOFLBenchProjectClients(t *testing.T) {
	b, err := projectClients([][]float64{{1, 0, 0}, {0, 0, 3}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !near(b[0], []float64{0, 1}, 1e-12) || !near(b[1], []float64{1, 0}, 1e-12) {
		t.Errorf("centers %v", b)
	}
	if _, err := projectClients([][]float64{{1}}, 2); err == nil {
		t.Error("fewer clients than components: no error")
	}
}

// FL-bench's subregion draw: with the same random numbers, center + U(0, ρ)·u/‖u‖₁,
// u_i = 2U − 1; its points lie within L1 distance ρ of the center and in general leave the
// simplex (their sum is not 1).
func TestFLOCOFLBenchL1Ball(t *testing.T) {
	center := []float64{0.6, 0.3, 0.1}
	r, ref := rng.New(3, 1, 1, "t"), rng.New(3, 1, 1, "t")
	off := false
	for i := 0; i < 200; i++ {
		a := sampleL1Ball(r, center, 0.1)
		u := []float64{2*ref.Float64() - 1, 2*ref.Float64() - 1, 2*ref.Float64() - 1}
		s := math.Abs(u[0]) + math.Abs(u[1]) + math.Abs(u[2])
		rad := 0.1 * ref.Float64()
		d, sum := 0.0, 0.0
		for k := range a {
			if w := center[k] + rad*u[k]/s; math.Abs(a[k]-w) > 1e-15 {
				t.Fatalf("draw %d: %v, want entry %d = %v", i, a, k, w)
			}
			d += math.Abs(a[k] - center[k])
			sum += a[k]
		}
		if d > 0.1+1e-12 {
			t.Fatalf("draw %v at L1 distance %v", a, d)
		}
		off = off || math.Abs(sum-1) > 1e-6
	}
	if !off {
		t.Error("no draw left the simplex")
	}
}

// Endpoints are Xavier normal: std sqrt(2/(in+out)) = sqrt(2/(40+10)) = 0.2, each drawn
// afresh.
func TestFLOCOFLBenchEndpoints(t *testing.T) {
	head := tensor.List{tensor.New("classifier.weight", 40, 10)}
	e := xavierEndpoints(head, 3, 1)
	for k := range e {
		ss := 0.0
		for _, v := range e[k][0].Data {
			ss += float64(v) * float64(v)
		}
		if std := math.Sqrt(ss / 400); math.Abs(std-0.2) > 0.03 {
			t.Errorf("endpoint %d: std %v, want 0.2", k, std)
		}
	}
	if e[0][0].Data[0] == e[1][0].Data[0] {
		t.Error("endpoints 0 and 1 start equal")
	}
}

// A run under impl flbench: the simplex holds only the classifier's weight, and after
// round tau every client (sampled or not) has a center on the simplex.
func TestFLOCOFLBenchRun(t *testing.T) {
	st, _ := runMLP(t, "floco", map[string]float64{"endpoints": 3, "tau": 1, "rho": 0.1}, map[string]string{"impl": "flbench"}, 2)
	s := st.Method.(*flocoState)
	if len(s.Endpoints[0]) != 1 || s.Endpoints[0][0].Name != "classifier.weight" {
		t.Errorf("endpoint tensors %v, want only classifier.weight", s.Endpoints[0])
	}
	for c, ct := range s.Center {
		if ct == nil {
			t.Fatalf("client %d has no center after tau", c)
		}
		sum := 0.0
		for _, v := range ct[0].Data {
			if v < 0 {
				t.Errorf("client %d: center %v off the simplex", c, ct[0].Data)
			}
			sum += float64(v)
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Errorf("client %d: center %v sums to %v", c, ct[0].Data, sum)
		}
	}
}
