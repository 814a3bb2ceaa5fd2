package methods

import (
	"math"
	"testing"
)

// FLOCO with one endpoint is FedAvg (the simplex is a point): same global model up to the
// rounding of applying the optimizer in Go.
func TestFLOCOOneEndpointIsFedAvg(t *testing.T) {
	one, _ := runMLP(t, "floco", map[string]float64{"endpoints": 1, "tau": 1}, nil, 3)
	avg, _ := runMLP(t, "fedavg", nil, nil, 3)
	for i, tt := range avg.Global {
		for j, v := range tt.Data {
			if d := math.Abs(float64(one.Global[i].Data[j] - v)); d > 1e-4*(1+math.Abs(float64(v))) {
				t.Fatalf("%s[%d]: FLOCO %v, FedAvg %v", tt.Name, j, one.Global[i].Data[j], v)
			}
		}
	}
}

func TestFLOCOSubregions(t *testing.T) {
	st, _ := runMLP(t, "floco", map[string]float64{"endpoints": 3, "tau": 2, "rho": 0.1}, nil, 4)
	assigned := 0
	for c, ct := range st.Method.(*flocoState).Center {
		if ct == nil {
			continue
		}
		assigned++
		s := 0.0
		for _, v := range ct[0].Data {
			if v < 0 {
				t.Errorf("client %d: center %v off the simplex", c, ct[0].Data)
			}
			s += float64(v)
		}
		if math.Abs(s-1) > 1e-5 {
			t.Errorf("client %d: center %v sums to %v", c, ct[0].Data, s)
		}
	}
	if assigned == 0 {
		t.Fatal("no client got a subregion after tau")
	}
	f := &floco{m: 3, rho: 0.1}
	r := rngForTest()
	center := []float64{0.6, 0.3, 0.1}
	for i := 0; i < 200; i++ {
		a := f.sample(r, center)
		dist, s := 0.0, 0.0
		for k := range a {
			if a[k] < 0 {
				t.Fatalf("sample %v off the simplex", a)
			}
			dist += (a[k] - center[k]) * (a[k] - center[k])
			s += a[k]
		}
		if math.Sqrt(dist) > 0.1+1e-12 || math.Abs(s-1) > 1e-12 {
			t.Fatalf("sample %v: distance %v from the center, sum %v", a, math.Sqrt(dist), s)
		}
	}
}
