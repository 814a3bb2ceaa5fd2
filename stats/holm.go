package stats

import (
	"math"
	"sort"
)

// Holm adjusts p-values for the m comparisons they come from by Holm's step-down method:
// the i-th smallest p becomes max over j ≤ i of min(1, (m−j+1)·p_(j)). A comparison is
// significant at Alpha after correction when its adjusted p is below Alpha. NaN p-values stay
// NaN and do not count in m.
func Holm(ps []float64) []float64 {
	out := make([]float64, len(ps))
	var idx []int
	for i, p := range ps {
		out[i] = math.NaN()
		if !math.IsNaN(p) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	m := len(idx)
	running := 0.0
	for j, i := range idx {
		adj := math.Min(1, float64(m-j)*ps[i])
		running = math.Max(running, adj)
		out[i] = running
	}
	return out
}
