package stats

import "math"

// Interval is a two-sided interval [Lo, Hi] at Level.
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Valid reports whether both ends are numbers.
func (iv Interval) Valid() bool { return !math.IsNaN(iv.Lo) && !math.IsNaN(iv.Hi) }

// Contains reports whether x lies in the closed interval.
func (iv Interval) Contains(x float64) bool { return iv.Lo <= x && x <= iv.Hi }

// none is the interval that cannot be computed (n too small).
var none = Interval{Lo: math.NaN(), Hi: math.NaN()}

// Mean is the arithmetic mean; NaN for no values.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	// One correction pass: the mean of the residuals, so that the result does not depend on
	// the order of large, nearly equal values more than rounding must.
	r := 0.0
	for _, x := range xs {
		r += x - m
	}
	return m + r/float64(len(xs))
}

// SampleStd is the sample standard deviation (divisor n − 1); NaN for fewer than 2 values.
func SampleStd(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m := Mean(xs)
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// TInterval is the Student-t interval at Level for the mean of xs: mean ± t(0.975, n−1)·s/√n.
// It is invalid (NaN ends) for fewer than 2 values.
func TInterval(xs []float64) Interval {
	n := len(xs)
	if n < 2 {
		return none
	}
	m, s := Mean(xs), SampleStd(xs)
	h := TQuantile(1-Alpha/2, float64(n-1)) * s / math.Sqrt(float64(n))
	return Interval{Lo: m - h, Hi: m + h}
}

// Summary is a metric over independent repetitions (seeds): N values, their Mean, sample Std
// (NaN when N < 2) and the Student-t interval CI of the mean (invalid when N < 2).
type Summary struct {
	N    int      `json:"n"`
	Mean float64  `json:"mean"`
	Std  float64  `json:"std"`
	CI   Interval `json:"ci"`
}

// Summarize summarizes xs over seeds.
func Summarize(xs []float64) Summary {
	return Summary{N: len(xs), Mean: Mean(xs), Std: SampleStd(xs), CI: TInterval(xs)}
}
