package stats

import (
	"math"
	"testing"
)

// Values from stats/testdata/reference.py: np.mean(x), np.std(x, ddof=1) and
// scipy.stats.t.interval(0.95, n-1, loc=mean, scale=scipy.stats.sem(x)) (SciPy 1.10.1), to the
// 2e-11 relative accuracy of SciPy's t quantile (see TestTQuantileAgainstSciPy).
func TestSummarizeAgainstSciPy(t *testing.T) {
	for _, c := range []struct {
		xs             []float64
		mean, std      float64
		lo, hi         float64
		constantSample bool
	}{
		{[]float64{96.89, 96.85, 96.93, 96.87}, 96.885, 0.03415650255320296, 96.83064938232407, 96.93935061767594, false},
		{[]float64{90.1, 91.3}, 90.69999999999999, 0.848528137423859, 83.07627715814071, 98.32372284185927, false},
		// SciPy returns NaN ends for a zero scale; the interval of three equal values is that value.
		{[]float64{88, 88, 88}, 88, 0, 88, 88, true},
	} {
		s := Summarize(c.xs)
		if s.N != len(c.xs) {
			t.Errorf("%v: n = %d", c.xs, s.N)
		}
		near(t, "mean", s.Mean, c.mean, 1e-14)
		near(t, "std", s.Std, c.std, 1e-12)
		near(t, "lo", s.CI.Lo, c.lo, 1e-11)
		near(t, "hi", s.CI.Hi, c.hi, 1e-11)
	}
}

// n = 1: the mean is the value, no standard deviation and no interval; n = 0: nothing.
func TestSummarizeOneAndNone(t *testing.T) {
	s := Summarize([]float64{95.78})
	if s.N != 1 || s.Mean != 95.78 || !math.IsNaN(s.Std) || s.CI.Valid() {
		t.Errorf("n=1: %+v", s)
	}
	s = Summarize(nil)
	if s.N != 0 || !math.IsNaN(s.Mean) || s.CI.Valid() {
		t.Errorf("n=0: %+v", s)
	}
	if iv := (Interval{Lo: 1, Hi: 2}); !iv.Contains(1.5) || iv.Contains(2.5) || !iv.Valid() {
		t.Errorf("Interval methods")
	}
}
