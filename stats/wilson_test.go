package stats

import (
	"fmt"
	"testing"
)

// Values from stats/testdata/reference.py:
// scipy.stats.binomtest(k, n).proportion_ci(0.95, method='wilson') (SciPy 1.10.1).
func TestWilsonAgainstSciPy(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{9053, 10000, 0.8994045801102911, 0.9108841508104385},
		{7, 10, 0.39677814746114526, 0.892208732593699},
		{0, 10, 0, 0.27753279986288926},
		{10, 10, 0.7224672001371109, 1},
		{1, 1, 0.20654931437723745, 1},
	} {
		iv := Wilson(c.k, c.n)
		near(t, fmt.Sprintf("Wilson(%d, %d).Lo", c.k, c.n), iv.Lo, c.lo, 1e-14)
		near(t, fmt.Sprintf("Wilson(%d, %d).Hi", c.k, c.n), iv.Hi, c.hi, 1e-14)
	}
	for _, c := range [][2]int{{0, 0}, {3, 2}, {-1, 5}} {
		if Wilson(c[0], c[1]).Valid() {
			t.Errorf("Wilson(%d, %d) valid", c[0], c[1])
		}
	}
}

// The pooled accuracy as a fraction gives back the count: 0.9053 of 10000 is 9053 correct.
func TestPooledInterval(t *testing.T) {
	if got, want := PooledInterval(0.9053, 10000), Wilson(9053, 10000); got != want {
		t.Errorf("%v, want %v", got, want)
	}
	if PooledInterval(0.5, 0).Valid() {
		t.Errorf("no samples: valid")
	}
}
