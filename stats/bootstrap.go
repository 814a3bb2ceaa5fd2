package stats

import (
	"math"
	"math/rand/v2"
	"sort"
)

// BootstrapResamples is the number of resamples BootstrapMean draws.
const BootstrapResamples = 10000

// BootstrapMean is the percentile bootstrap interval at Level for the mean of xs (e.g. the
// per-client accuracies of one run: the uncertainty of the client mean from which clients
// happen to be in the federation). Resampling is driven by a PCG stream seeded with seed, so
// the same xs and seed give the same bits; the seed is a reporting choice and enters no key.
// A single value gives the degenerate interval [x, x]; no values, an invalid one.
func BootstrapMean(xs []float64, seed uint64) Interval {
	n := len(xs)
	switch n {
	case 0:
		return none
	case 1:
		return Interval{Lo: xs[0], Hi: xs[0]}
	}
	r := rand.New(rand.NewPCG(seed, 0x6665647069706521)) // "fedpipe!"
	means := make([]float64, BootstrapResamples)
	for b := range means {
		s := 0.0
		for i := 0; i < n; i++ {
			s += xs[r.IntN(n)]
		}
		means[b] = s / float64(n)
	}
	sort.Float64s(means)
	return Interval{Lo: percentile(means, Alpha/2), Hi: percentile(means, 1-Alpha/2)}
}

// percentile is the q-quantile of sorted values, interpolated linearly between order
// statistics (numpy's default "linear" rule).
func percentile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(i)
	return sorted[i] + f*(sorted[i+1]-sorted[i])
}
