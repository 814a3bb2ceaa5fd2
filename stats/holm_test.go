package stats

import (
	"math"
	"testing"
)

// Hand-worked: p = (0.01, 0.04, 0.03, 0.005), m = 4. Sorted 0.005, 0.01, 0.03, 0.04 are
// multiplied by 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04, then made monotone: 0.02, 0.03, 0.06, 0.06.
func TestHolm(t *testing.T) {
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	for i, want := range []float64{0.03, 0.06, 0.06, 0.02} {
		near(t, "holm", got[i], want, 1e-15)
	}
	// Capped at 1; NaN stays NaN and does not count: m = 2 here.
	got = Holm([]float64{0.7, math.NaN(), 0.6})
	if got[0] != 1 || !math.IsNaN(got[1]) || got[2] != 1 {
		t.Errorf("cap and NaN: %v", got)
	}
	// One comparison: unchanged; ties keep their order and value.
	if got = Holm([]float64{0.03}); got[0] != 0.03 {
		t.Errorf("m=1: %v", got)
	}
	got = Holm([]float64{0.02, 0.02})
	if got[0] != 0.04 || got[1] != 0.04 {
		t.Errorf("ties: %v", got)
	}
	if len(Holm(nil)) != 0 {
		t.Errorf("empty")
	}
}
