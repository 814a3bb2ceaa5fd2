package stats

import "math"

// Wilson is the Wilson score interval at Level for a proportion: correct successes out of
// total trials, as a fraction in [0, 1]. It treats the test samples as independent draws, so it
// is the test set's sampling uncertainty of one trained model, not the spread over seeds.
// Invalid (NaN ends) when total ≤ 0 or correct is outside [0, total].
func Wilson(correct, total int) Interval {
	if total <= 0 || correct < 0 || correct > total {
		return none
	}
	n := float64(total)
	p := float64(correct) / n
	z := NormalQuantile(1 - Alpha/2)
	z2 := z * z
	center := (p + z2/(2*n)) / (1 + z2/n)
	half := z / (1 + z2/n) * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	return Interval{Lo: math.Max(0, center-half), Hi: math.Min(1, center+half)}
}

// PooledInterval is the Wilson interval of a pooled accuracy (a fraction) measured on samples
// test samples: the count of correct samples is recovered as round(accuracy·samples).
func PooledInterval(accuracy float64, samples int) Interval {
	if math.IsNaN(accuracy) {
		return none
	}
	return Wilson(int(math.Round(accuracy*float64(samples))), samples)
}
