package methods

import (
	"math"
	"testing"
)

// With both regularizers off FLUTE is FedRep: same body and same personal heads, up to
// the rounding of the Go-side optimizer.
func TestFLUTEWithoutRegularizersIsFedRep(t *testing.T) {
	fl, cfg := runMLP(t, "flute", map[string]float64{"lambda_nc2": 0, "lambda_nc3": 0, "head_epochs": 1}, nil, 3)
	rep, _ := runMLP(t, "fedrep", map[string]float64{"head_epochs": 1}, nil, 3)
	fr, rr := &flute{}, &split{personal: []string{"classifier."}, schedule: "rep"}
	for c := 0; c < cfg.Assign.Clients(); c++ {
		a, b := fr.EvalModel(fl, c), rr.EvalModel(rep, c)
		for i := range b {
			for j, v := range b[i].Data {
				if d := math.Abs(float64(a[i].Data[j] - v)); d > 1e-4*(1+math.Abs(float64(v))) {
					t.Fatalf("client %d %s[%d]: FLUTE %v, FedRep %v", c, b[i].Name, j, a[i].Data[j], v)
				}
			}
		}
	}
}

// The NC2 and NC3 gradients match central differences of their values, and the NC2 term
// vanishes on a simplex ETF.
func TestFLUTERegularizers(t *testing.T) {
	const d, classes = 4, 3
	r := rngForTest()
	w := make([]float64, d*classes)
	for i := range w {
		w[i] = r.NormFloat64()
	}
	present := []int{0, 2}
	means := [][]float64{{1, 2, 0, 1}, {0, 0, 0, 0}, {-1, 0.5, 2, 0}}
	for _, term := range []func(w, grad []float64) float64{
		func(w, grad []float64) float64 { return nc2(w, d, classes, []int{0, 1, 2}, 1, grad) },
		func(w, grad []float64) float64 { return nc3(w, d, classes, present, means, 1, grad) },
	} {
		g := make([]float64, len(w))
		term(w, g)
		for i := range w {
			const eps = 1e-6
			p, m := append([]float64(nil), w...), append([]float64(nil), w...)
			p[i] += eps
			m[i] -= eps
			fd := (term(p, make([]float64, len(w))) - term(m, make([]float64, len(w)))) / (2 * eps)
			if math.Abs(fd-g[i]) > 1e-5 {
				t.Fatalf("entry %d: gradient %v, central difference %v", i, g[i], fd)
			}
		}
	}
	// Three unit vectors at 120° in a plane: a simplex ETF, NC2 = 0.
	etf := make([]float64, d*classes)
	for c := 0; c < classes; c++ {
		a := 2 * math.Pi * float64(c) / 3
		etf[0*classes+c], etf[1*classes+c] = math.Cos(a), math.Sin(a)
	}
	if v := nc2(etf, d, classes, []int{0, 1, 2}, 1, make([]float64, d*classes)); v > 1e-12 {
		t.Errorf("NC2 of a simplex ETF = %v, want 0", v)
	}
}
