package stats

import (
	"math"
	"testing"
)

// The bootstrap is deterministic: the same values and seed give the same bits, another seed
// other bits; one value gives [x, x]; no values, nothing.
func TestBootstrapMeanDeterministic(t *testing.T) {
	xs := []float64{91.2, 88.4, 95.0, 79.9, 90.3, 86.7, 93.1, 84.4}
	a, b := BootstrapMean(xs, 1), BootstrapMean(xs, 1)
	if a != b {
		t.Errorf("same seed: %v vs %v", a, b)
	}
	if c := BootstrapMean(xs, 2); c == a {
		t.Errorf("another seed gave the same interval %v", c)
	}
	if !a.Contains(Mean(xs)) || a.Lo < 79.9 || a.Hi > 95 {
		t.Errorf("interval %v around mean %g", a, Mean(xs))
	}
	if iv := BootstrapMean([]float64{95.78}, 1); iv != (Interval{95.78, 95.78}) {
		t.Errorf("n=1: %v", iv)
	}
	if BootstrapMean(nil, 1).Valid() {
		t.Errorf("n=0 valid")
	}
}

// Hand-worked: for two clients a < b the bootstrap mean is a with probability ¼, (a+b)/2 with
// ½ and b with ¼, so its 2.5 % and 97.5 % quantiles are a and b. Equal values give a
// zero-width interval.
func TestBootstrapMeanHandWorked(t *testing.T) {
	if iv := BootstrapMean([]float64{80, 90}, 7); iv != (Interval{80, 90}) {
		t.Errorf("two clients: %v, want [80, 90]", iv)
	}
	if iv := BootstrapMean([]float64{70, 70, 70, 70}, 7); iv != (Interval{70, 70}) {
		t.Errorf("equal clients: %v", iv)
	}
}

// With many clients the percentile bootstrap approaches the normal interval
// mean ± 1.96·s/√n (s with divisor n, as the bootstrap resamples the empirical distribution).
func TestBootstrapMeanLargeSample(t *testing.T) {
	xs := make([]float64, 400)
	for i := range xs {
		xs[i] = 50 + 30*math.Sin(float64(i)*0.7)
	}
	m := Mean(xs)
	s := SampleStd(xs) * math.Sqrt(float64(len(xs)-1)/float64(len(xs)))
	h := NormalQuantile(0.975) * s / math.Sqrt(float64(len(xs)))
	iv := BootstrapMean(xs, 3)
	if math.Abs(iv.Lo-(m-h)) > 0.1*h || math.Abs(iv.Hi-(m+h)) > 0.1*h {
		t.Errorf("bootstrap %v, normal [%g, %g]", iv, m-h, m+h)
	}
}
