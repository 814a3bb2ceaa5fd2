package stats

import (
	"math"
	"testing"
)

// near fails t unless got is within tol (relative to max(1, |want|)) of want; NaN matches NaN.
func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(want) && math.IsNaN(got) {
		return
	}
	if !(math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))) {
		t.Errorf("%s = %.17g, want %.17g", what, got, want)
	}
}
