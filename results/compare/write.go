package compare

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/fedpipe/fedpipe/results/listing"
	"github.com/fedpipe/fedpipe/stats"
)

// WriteSides writes the sides' names, the parameters that differ and the runs' metrics side
// by side with the difference B − A: diff's first tables.
func WriteSides(w io.Writer, a, b *Side, params []Param, runs []Run) {
	fmt.Fprintf(w, "A: %s\nB: %s\n\n", a.Name, b.Name)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(params) == 0 {
		fmt.Fprintln(w, "parameters: identical")
	} else {
		fmt.Fprintln(tw, "parameter\tA\tB")
		for _, p := range params {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Path, orDash(p.A), orDash(p.B))
		}
		_ = tw.Flush()
	}
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "run\tfinal % A\tB\tΔ\tpooled % A\tB\tΔ\tbest pooled % A\tB\tΔ")
	for _, r := range runs {
		cells := []string{r.Run}
		for _, m := range Metrics {
			va, vb := r.A[m], r.B[m]
			cells = append(cells, pctOr(va, r.StateA), pctOr(vb, r.StateB), delta(va, vb))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	_ = tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

func pctOr(v *float64, state string) string {
	if v == nil {
		return state
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

func delta(a, b *float64) string {
	if a == nil || b == nil || math.IsNaN(*a) || math.IsNaN(*b) {
		return ""
	}
	return fmt.Sprintf("%+.2f", *b-*a)
}

// metricLabel names a metric of Metrics in the terminal table.
var metricLabel = map[string]string{
	"final_client_mean_pct": "final % (client mean)",
	"final_pooled_pct":      "final % (pooled)",
	"best_pooled_pct":       "best pooled %",
}

// WritePaired writes the paired comparisons, after WriteSides's run table.
func WritePaired(w io.Writer, cmps []Paired) {
	if len(cmps) == 0 {
		fmt.Fprintln(w, "\npaired comparison: no run computed on both sides")
		return
	}
	for _, c := range cmps {
		name := "B − A"
		if c.Config != "" {
			name += " for " + c.Config
		}
		fmt.Fprintf(w, "\npaired comparison, %s (percentage points), seeds %s:\n", name, joinSeeds(c.Seeds))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "metric\tA: mean ± sample std (n) [95% CI over seeds]\tB: mean ± sample std (n) [95% CI over seeds]\tpaired over\tn\tmean Δ\t95% CI of Δ\tp\ttest")
		for _, m := range c.Metrics {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", metricLabel[m.Metric], fmtSummary(m.A), fmtSummary(m.B), fmtPaired(m.Seeds))
		}
		if c.Clients != nil {
			fmt.Fprintf(tw, "%s\t\t\t%s\n", "final % per client (seeds pooled)", fmtPaired(*c.Clients))
		}
		_ = tw.Flush()
		if c.Note != "" {
			fmt.Fprintf(w, "no comparison by client: %s\n", c.Note)
		}
	}
	fmt.Fprintln(w, "p: two-sided, uncorrected for the number of comparisons; intervals: Student t. See docs/statistics.md.")
}

func joinSeeds(seeds []int64) string {
	var s []string
	for _, x := range seeds {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ",")
}

// fmtSummary is "mean ± std (n) [lo, hi]", leaving out what one value cannot have.
func fmtSummary(s stats.Summary) string {
	if s.N < 2 {
		return fmt.Sprintf("%.2f (n=1, no interval)", s.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f (n=%d) %s", s.Mean, s.Std, s.N, listing.FormatInterval(s.CI))
}

// fmtPaired lays a comparison out as diff's columns: unit, n, mean Δ, interval, p, test.
func fmtPaired(p stats.Paired) string {
	n := fmt.Sprint(p.N)
	if p.Nonzero+p.Zeros > 0 { // a signed-rank test from counts: what it ranked, what it dropped
		n = fmt.Sprintf("%d (%d non-zero, %d zeros dropped)", p.N, p.Nonzero, p.Zeros)
	}
	return fmt.Sprintf("%s\t%s\t%+.2f\t%s\t%s\t%s", p.Unit, n, p.Mean, listing.FormatInterval(p.CI), stats.FormatP(p.P), p.Test)
}
