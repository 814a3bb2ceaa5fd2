package latex

import (
	"fmt"
	"math"

	"github.com/fedpipe/fedpipe/artifacts/table"
)

// sig is what a results row adds to its LaTeX cell beyond the mean: the significance
// mark and, for one seed, the test-set interval (the report's results table columns vs_best,
// ci95_*; absent in a table without them).
type sig struct {
	notSig bool
	// untestable: the column's test could not find any difference with so few pairs (vs_best
	// "untestable with these seeds"), so neither a dagger nor its absence says anything.
	untestable bool
	// worse: a test ran and found the cell significantly worse than the best (no mark).
	worse bool
	// oneSeed: the cell has one seed (set for sigCaption).
	oneSeed bool
	lo, hi  float64
	over    string
}

// sigOf reads row i's significance columns.
func sigOf(t *table.Table, i int) sig {
	s := sig{lo: math.NaN(), hi: math.NaN()}
	if c := t.Col("vs_best"); c != nil {
		s.notSig = c.String[i] == "not significantly different"
		s.untestable = c.String[i] == "untestable with these seeds"
		s.worse = c.String[i] == "significantly worse"
	}
	if lo, hi, over := t.Col("ci95_lo_pct"), t.Col("ci95_hi_pct"), t.Col("ci95_over"); lo != nil && hi != nil && over != nil {
		s.lo, s.hi, s.over = lo.Float64[i], hi.Float64[i], over.String[i]
	}
	return s
}

// cell is the part of a LaTeX cell after the mean: "$\pm$ std (n)", a dagger when not
// significantly different from the best; with one seed "(1)" and the run's test-set interval.
func (s sig) cell(std float64, n int64) string {
	var out string
	if n > 1 {
		out = fmt.Sprintf(" $\\pm$ %.2f (%d)", std, n)
	} else {
		out = " (1)"
		if s.interval(n) {
			out += fmt.Sprintf(" [%.2f, %.2f]", s.lo, s.hi)
		}
	}
	switch {
	case s.notSig:
		out += "$^\\dagger$"
	case s.untestable:
		out += "$^\\circ$"
	}
	return out
}

// interval reports whether a cell of n seeds shows a one-seed test-set interval.
func (s sig) interval(n int64) bool {
	return n == 1 && s.over == "test set" && !math.IsNaN(s.lo)
}

// sigCaption is the caption's sentences on the marks and intervals the table's cells (used:
// those computed, each with oneSeed set for a cell of one seed) carry, each only when some cell carries it: the dagger, the circle of a
// cell no test could judge (so that no mark reads as "significantly worse" only where a
// test ran), and the one-seed interval. The test is named from the table's compare_over
// metadata.
func sigCaption(t *table.Table, used []sig) string {
	var dagger, circle, worse, interval bool
	for _, s := range used {
		dagger, circle, worse = dagger || s.notSig, circle || s.untestable, worse || s.worse
		interval = interval || s.oneSeed && s.interval(1)
	}
	test := ""
	switch t.Meta["compare_over"] {
	case "seeds":
		test = "an exact sign-flip permutation test paired by seed"
	case "clients":
		test = "a Wilcoxon signed-rank test on per-client final accuracy, paired by client within each seed, seeds pooled"
	default:
		dagger, circle, worse = false, false, false
	}
	by := " by " + test + " (two-sided, Holm-corrected within the column)"
	var out string
	if dagger {
		out += " $^\\dagger$: not significantly different from the best at 5\\%," + by + "."
		by = ""
	}
	if worse {
		if by != "" {
			by = " at 5\\%," + by
		}
		out += " Neither bold nor marked: significantly worse than the best" + by + "."
		by = ""
	}
	if circle {
		out += " $^\\circ$: no test possible: too few seeds (or clients) are paired for any difference to reach 5\\%"
		if by != "" {
			out += by[:len(by)-1] + ")"
		}
		out += "."
	}
	if interval {
		out += " [$\\cdot$]: one seed, the run's 95\\% test-set interval (Wilson over pooled test samples, or bootstrap over clients)."
	}
	return out
}
