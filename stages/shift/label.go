package shift

import (
	"fmt"
	"math"
	"sort"

	"github.com/fedpipe/fedpipe/stages/rng"
)

// LabelShift returns client c's test set under label shift of concentration alpha: the
// class proportions are re-drawn as p ~ Dirichlet(alpha) over the classes present in the
// pooled test data, the n = len(own) samples are split into class counts by largest
// remainder of p·n (ties to the lower class), and each class's count is drawn uniformly
// with replacement from the client's own test samples of that class — or, where the
// client has none, from the pooled test samples of that class (all clients'). labels maps
// a sample index to its class. Small alpha concentrates the test set on few classes;
// large alpha makes it nearly balanced. The draws come from the stream (seed, client,
// "shift/label/alpha"), so the result is deterministic.
func LabelShift(own, pool []int, labels []int32, classes int, alpha float64, seed int64, client int) []int {
	n := len(own)
	if n == 0 {
		return nil
	}
	byClass := func(idx []int) [][]int {
		out := make([][]int, classes)
		for _, i := range idx {
			out[labels[i]] = append(out[labels[i]], i)
		}
		return out
	}
	mine, pooled := byClass(own), byClass(pool)
	var present []int
	for k := range pooled {
		if len(pooled[k]) > 0 || len(mine[k]) > 0 {
			present = append(present, k)
		}
	}
	r := rng.New(seed, rng.Global, client, fmt.Sprintf("shift/label/%v", alpha))
	p := rng.Dirichlet(r, alpha, len(present))
	counts := make([]int, len(present))
	got := 0
	order := make([]int, len(present))
	for i := range present {
		exact := p[i] * float64(n)
		counts[i] = int(math.Floor(exact))
		got += counts[i]
		order[i] = i
	}
	frac := func(i int) float64 { e := p[i] * float64(n); return e - math.Floor(e) }
	sort.SliceStable(order, func(a, b int) bool { return frac(order[a]) > frac(order[b]) })
	for i := 0; got < n; i++ {
		counts[order[i%len(order)]]++
		got++
	}
	out := make([]int, 0, n)
	for i, k := range present {
		src := mine[k]
		if len(src) == 0 {
			src = pooled[k]
		}
		for j := 0; j < counts[i]; j++ {
			out = append(out, src[r.IntN(len(src))])
		}
	}
	return out
}
