package site

import (
	"fmt"
	"math"
	"sort"

	"github.com/fedpipe/fedpipe/results/summary"
	"github.com/fedpipe/fedpipe/stats"
)

// The vs_best values of the results table: how a method compares with its column's best.
const (
	vsBest        = "best"
	vsNotSig      = "not significantly different"
	vsWorse       = "significantly worse"
	vsNotComputed = ""
	// vsUntestable: with so few pairs (seeds) no difference could reach 5 % after the
	// column's Holm correction, so no mark says anything (no †).
	vsUntestable = "untestable with these seeds"
)

// mark is one results cell's standing in its column: whether it is the best mean, and the
// Holm-corrected p-value of its paired test against the best (NaN for the best itself).
type mark struct {
	best bool
	p    float64
	vs   string
}

// series is one method's runs in one column, by seed: the metric (percent) and the
// per-client final accuracies (percent).
type series struct {
	values  map[int64]float64
	clients map[int64][]float64
	// counts are clients' test counts (correct of samples), by seed, as clients: the
	// signed-rank test takes their differences exactly (stats.CompareCounts).
	counts map[int64][]stats.Count
	mean   float64
}

// columnSeries gathers every (row, column)'s computed runs.
func (c *collected) columnSeries(metric string) map[[2]string]*series {
	out := map[[2]string]*series{}
	for _, x := range c.runs {
		if x.summary == nil {
			continue
		}
		v := value(*x.summary, metric)
		if math.IsNaN(v) {
			continue
		}
		k := [2]string{x.row, x.col}
		s := out[k]
		if s == nil {
			s = &series{values: map[int64]float64{}, clients: map[int64][]float64{}}
			out[k] = s
		}
		s.values[x.r.Seed] = v
		if len(x.clients) > 0 {
			acc := make([]float64, len(x.clients))
			cnt := make([]stats.Count, len(x.clients))
			for i, cl := range x.clients {
				acc[i] = 100 * cl.Accuracy
				cnt[i] = stats.CountOf(cl.Accuracy, cl.Samples)
			}
			s.clients[x.r.Seed] = acc
			if s.counts == nil {
				s.counts = map[int64][]stats.Count{}
			}
			s.counts[x.r.Seed] = cnt
		}
	}
	for _, s := range out {
		var vs []float64
		for _, v := range s.values {
			vs = append(vs, v)
		}
		s.mean = stats.Mean(vs)
	}
	return out
}

// marks compares, in each column, every method with the column's best mean, paired over
// unit (seeds: the metric of the seeds both computed, exact sign-flip test; clients: each
// client's final accuracy, paired within a seed, the seeds pooled, Wilcoxon signed-rank), and
// corrects the column's p-values with Holm's method. A comparison that cannot be made (no
// seed or client in common) gets p = NaN and counts as not significant: nothing shows the
// method worse.
func (c *collected) marks(metric string, unit stats.Unit) map[[2]string]mark {
	ser := c.columnSeries(metric)
	out := map[[2]string]mark{}
	for _, col := range c.cols {
		best := ""
		for _, row := range c.rows {
			if s := ser[[2]string{row, col}]; s != nil && (best == "" || s.mean > ser[[2]string{best, col}].mean) {
				best = row
			}
		}
		if best == "" {
			continue
		}
		b := ser[[2]string{best, col}]
		var others []string
		var ps, minPs []float64
		for _, row := range c.rows {
			s := ser[[2]string{row, col}]
			if s == nil || row == best {
				continue
			}
			others = append(others, row)
			p, minP := pairedP(b, s, unit)
			ps, minPs = append(ps, p), append(minPs, minP)
		}
		out[[2]string{best, col}] = mark{best: true, p: math.NaN(), vs: vsBest}
		for i, adj := range stats.Holm(ps) {
			m := mark{p: adj, vs: vsNotSig}
			switch {
			case adj < stats.Alpha:
				m.vs = vsWorse
			case float64(len(ps))*minPs[i] >= stats.Alpha: // Holm's smallest factor is the column's count
				m.vs = vsUntestable
			}
			out[[2]string{others[i], col}] = m
		}
	}
	return out
}

// pairedP is the two-sided p-value of s against the best b, paired over unit, and the
// smallest p its test could give with these pairs (stats.MinP); NaN and 1 when they share no
// seed (or, over clients, no seed with the same number of clients).
func pairedP(b, s *series, unit stats.Unit) (p, minP float64) {
	c, ok := pairedCompare(s, b, unit)
	if !ok {
		return math.NaN(), 1
	}
	n := c.N
	if c.Nonzero+c.Zeros > 0 {
		n = c.Nonzero
	}
	return c.P, stats.MinP(c.Test, n)
}

// pairedCompare compares b against a (b − a) paired over unit: by seed, the metric of the
// seeds both computed; by client, each client's final accuracy within each such seed, the
// seeds pooled. ok is false when nothing pairs.
func pairedCompare(a, b *series, unit stats.Unit) (stats.Paired, bool) {
	var seeds []int64
	for seed := range b.values {
		if _, ok := a.values[seed]; ok {
			seeds = append(seeds, seed)
		}
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i] < seeds[j] })
	var xa, xb []float64
	var na, nb []stats.Count
	for _, seed := range seeds {
		if unit == stats.Clients {
			ca, cb := a.counts[seed], b.counts[seed]
			if len(cb) == 0 || len(cb) != len(ca) {
				continue
			}
			na, nb = append(na, ca...), append(nb, cb...)
			xa, xb = append(xa, a.clients[seed]...), append(xb, b.clients[seed]...)
			continue
		}
		xa, xb = append(xa, a.values[seed]), append(xb, b.values[seed])
	}
	if unit == stats.Clients && len(na) > 0 && countsKnown(na, nb) {
		return stats.CompareCounts(na, nb), true
	}
	if len(xa) == 0 {
		return stats.Paired{}, false
	}
	return stats.Compare(unit, xa, xb), true
}

// countsKnown reports whether every pair of client counts is over the same positive number of
// test samples (a per-client table that records them): then the differences are exact.
func countsKnown(a, b []stats.Count) bool {
	for i := range a {
		if a[i].Samples <= 0 || a[i].Samples != b[i].Samples {
			return false
		}
	}
	return true
}

// significanceNote is the footnote of the results table: the marks and the test behind them.
func significanceNote(unit stats.Unit) string {
	test := "an exact sign-flip permutation test on the metric, paired by seed (with n seeds its p-value is at least 2/2ⁿ: with fewer than 6 seeds no difference can be significant)"
	if unit == stats.Clients {
		test = "a Wilcoxon signed-rank test on each client's final accuracy, paired by client within each seed, the seeds pooled (clients of one federation are not independent: read it as a description of these clients)"
	}
	return fmt.Sprintf("Bold: the best mean of its column. †: not significantly different from the best at 5 %%, by %s, two-sided, Holm-corrected over the column's comparisons; "+
		"no † where the pairs are too few for any difference to reach 5 %% after that correction (vs_best: \"untestable with these seeds\"), since there the mark would say nothing. "+
		"Intervals: with several seeds, the 95 %% Student-t interval of the mean over seeds; with one seed, the 95 %% test-set interval of that run (Wilson over its pooled test samples, or a bootstrap over its clients), which says nothing about another seed. See docs/statistics.md.", test)
}

// cellInterval is the interval a results cell shows: over seeds (Student t) when the cell
// has several, else the one run's test-set interval.
type cellInterval struct {
	lo, hi float64
	kind   string // "seeds", "test set" or ""
	text   string // as the cell shows it, with a leading space ("" when none)
}

// interval computes a results cell's interval from its seeds' values vals.
func (c *collected) interval(row, col, metric string, vals []float64) cellInterval {
	none := cellInterval{lo: math.NaN(), hi: math.NaN()}
	if len(vals) > 1 {
		iv := stats.TInterval(vals)
		return cellInterval{lo: iv.Lo, hi: iv.Hi, kind: "seeds", text: fmt.Sprintf(" [%.2f, %.2f] over seeds", iv.Lo, iv.Hi)}
	}
	for _, x := range c.runs {
		if x.row != row || x.col != col || x.summary == nil {
			continue
		}
		iv, how, ok := summary.TestSetInterval(*x.summary, summary.ClientAccuracies(x.clients), metric)
		if !ok {
			return none
		}
		return cellInterval{lo: iv.Lo, hi: iv.Hi, kind: "test set", text: fmt.Sprintf(" [%.2f, %.2f] test set (%s)", iv.Lo, iv.Hi, how)}
	}
	return none
}
