package site

import (
	"fmt"
	"math"

	"github.com/fedpipe/fedpipe/stats"
)

// pairwise compares every two methods of each column (B against A, A listed first in the
// table), paired over unit, with p-values Holm-corrected over the column's pairs: a grid per
// column that has two methods computed, and the rows of the pairwise data table.
func (c *collected) pairwise(metric string, unit stats.Unit) ([]grid, []pairwiseRow) {
	ser := c.columnSeries(metric)
	var grids []grid
	var data []pairwiseRow
	for _, col := range c.cols {
		var rows []pairwiseRow
		for i, a := range c.rows {
			for _, b := range c.rows[i+1:] {
				sa, sb := ser[[2]string{a, col}], ser[[2]string{b, col}]
				if sa == nil || sb == nil {
					continue
				}
				cmp, ok := pairedCompare(sa, sb, unit)
				if !ok {
					continue
				}
				rows = append(rows, pairwiseRow{Cell: col, A: a, B: b, Over: string(cmp.Unit), N: cmp.N, Diff: cmp.Mean,
					Lo: cmp.CI.Lo, Hi: cmp.CI.Hi, P: cmp.P, Test: cmp.Test})
			}
		}
		if len(rows) == 0 {
			continue
		}
		ps := make([]float64, len(rows))
		for i, r := range rows {
			ps[i] = r.P
		}
		caption := col
		if caption == "" {
			caption = "all runs"
		}
		g := grid{caption: caption, text: 3, head: []string{"A", "B", "paired over", "n", "B − A", "95 % interval", "p", "p, Holm", "test"}}
		for i, adj := range stats.Holm(ps) {
			r := &rows[i]
			r.PHolm = adj
			g.rows = append(g.rows, cells([]string{r.A, r.B, r.Over, fmt.Sprint(r.N), fmt.Sprintf("%+.2f", r.Diff),
				intervalText(r.Lo, r.Hi), stats.FormatP(r.P), stats.FormatP(r.PHolm), r.Test}))
		}
		grids = append(grids, g)
		data = append(data, rows...)
	}
	return grids, data
}

// intervalText is "[lo, hi]" with two decimals, "—" when it cannot be computed.
func intervalText(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "—"
	}
	return fmt.Sprintf("[%+.2f, %+.2f]", lo, hi)
}

// pairwiseIntro is the pairwise section's introduction.
func pairwiseIntro(metric string, unit stats.Unit) string {
	what := fmt.Sprintf("the %s paired by seed (seeds both computed), exact sign-flip permutation test", metricLabel(metric))
	if unit == stats.Clients {
		what = "each client's final accuracy paired within its seed, the seeds pooled, Wilcoxon signed-rank test"
	}
	return fmt.Sprintf("Every two methods of each column, B − A in percentage points: %s; a 95 %% Student-t interval of the mean difference; two-sided p, and p Holm-corrected over the column's pairs. See docs/statistics.md for when not to trust them.", what)
}
