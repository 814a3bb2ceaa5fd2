package methods

import (
	"math"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
)

func TestPickPersonalHandCase(t *testing.T) {
	pc, pg := []float64{0.9, 0.1}, []float64{0.5, 0.5}
	// E_c = 0.325083, E_g = ln 2 = 0.693147, Sim = 0.5/√(0.82·0.5) = 0.780869.
	if got := Entropy(pc); math.Abs(got-0.325083) > 1e-6 {
		t.Errorf("entropy %v", got)
	}
	if got := Cosine(pc, pg); math.Abs(got-0.780869) > 1e-6 {
		t.Errorf("cosine %v", got)
	}
	// BE_c 0.2, BE_g 0.7: 0.325083 − 0.219131·0.2 = 0.281257 < 0.693147 − 0.219131·0.7 = 0.539755.
	if !PickPersonal(pc, pg, 0.2, 0.7) {
		t.Error("BE_g 0.7: want the personal model")
	}
	// BE_g 2.0: 0.281257 > 0.693147 − 0.219131·2 = 0.254885.
	if PickPersonal(pc, pg, 0.2, 2.0) {
		t.Error("BE_g 2.0: want the global model")
	}
}

// Two samples, a personal model with logits 4x and a global model with logits (−10x₀, 10x₀):
//
//	x1 = (1, 0), label 0: p_c = (0.982, 0.018), E_c = 0.090; p_g ≈ (0, 1), E_g ≈ 0; 1 − Sim = 0.98
//	x2 = (0.1, 0), label 1: p_c = (0.599, 0.401), E_c = 0.673; p_g = (0.119, 0.881), E_g = 0.363; 1 − Sim = 0.337
//
// With BE_c = BE_g = 0 both samples go to θ_g (only x2 right: 50%); with BE_c = 0.2, x1
// goes to θ_c (0.090 − 0.196 < 0) and x2 stays with θ_g (0.673 − 0.067 > 0.363): 100%.
func TestAdaptiveEvaluatePicksPerSample(t *testing.T) {
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.NewModel(backend, model.ModelSpec{Arch: "logreg", InputShape: []int{2}, NumClasses: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	model := func(w ...float32) tensor.List {
		return tensor.List{{Name: "classifier.weight", Shape: []int{2, 2}, Data: w},
			{Name: "classifier.bias", Shape: []int{2}, Data: []float32{0, 0}}}
	}
	x, y := []float32{1, 0, 0.1, 0}, []int32{0, 1}
	for _, tc := range []struct {
		beC  float64
		want float64
	}{{0, 0.5}, {0.2, 1}} {
		ad := &Adaptive{m: m, personal: []tensor.List{model(4, 0, 0, 4)}, global: model(-10, 10, 0, 0),
			baseC: []float64{tc.beC}, baseG: []float64{0}}
		got, err := ad.Evaluate(0, x, y)
		if err != nil {
			t.Fatal(err)
		}
		if got.Accuracy != tc.want || got.Samples != 2 {
			t.Errorf("BE_c %v: accuracy %v on %d samples, want %v", tc.beC, got.Accuracy, got.Samples, tc.want)
		}
	}
}
