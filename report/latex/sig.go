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
	lo, hi float64
	over   string
}

// sigOf reads row i's significance columns.
func sigOf(t *table.Table, i int) sig {
	s := sig{lo: math.NaN(), hi: math.NaN()}
	if c := t.Col("vs_best"); c != nil {
		s.notSig = c.String[i] == "not significantly different"
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
		if s.over == "test set" && !math.IsNaN(s.lo) {
			out += fmt.Sprintf(" [%.2f, %.2f]", s.lo, s.hi)
		}
	}
	if s.notSig {
		out += "$^\\dagger$"
	}
	return out
}

// sigCaption is the caption's sentence on the marks and intervals, from the table's
// compare_over metadata ("" for a table without it).
func sigCaption(t *table.Table) string {
	test := ""
	switch t.Meta["compare_over"] {
	case "seeds":
		test = "an exact sign-flip permutation test paired by seed"
	case "clients":
		test = "a Wilcoxon signed-rank test on per-client final accuracy, paired by client within each seed, seeds pooled"
	default:
		return ""
	}
	return " $^\\dagger$: not significantly different from the best at 5\\%, by " + test +
		" (two-sided, Holm-corrected within the column); no mark where too few seeds (or clients) are paired for any difference to reach 5\\% after that correction." +
		" [$\\cdot$]: one seed, the run's 95\\% test-set interval (Wilson over pooled test samples, or bootstrap over clients)."
}
