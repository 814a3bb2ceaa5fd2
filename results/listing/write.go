package listing

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stats"
)

// WriteCSV writes rows as CSV: identity, swept parameters, state, metrics, provenance and
// test-set intervals.
func WriteCSV(w io.Writer, rows []Row) error {
	paths, multi := SweptPaths(rows), MultiManifest(rows)
	cw := csv.NewWriter(w)
	_ = cw.Write(append(append(Header(paths, multi), ProvHeader...), IntervalHeader...))
	for _, r := range rows {
		_ = cw.Write(append(append(Cells(r, paths, multi), ProvCells(r)...), IntervalCells(r)...))
	}
	cw.Flush()
	return cw.Error()
}

// WriteTable writes rows as an aligned table (with prov, the provenance columns) and a
// line counting them by state.
func WriteTable(w io.Writer, rows []Row, prov bool) {
	paths, multi := SweptPaths(rows), MultiManifest(rows)
	h := Header(paths, multi)
	for i, p := range paths {
		h[i+3+boolInt(multi)] = manifest.ShortPath(p)
	}
	n := len(h)
	h[n-4], h[n-3], h[n-2], h[n-1] = "final %", "pooled %", "best %", "best pooled %"
	if prov {
		h = append(h, "commit", "backend", "threads", "train s", "peak RSS", "date")
	}
	h = append(h, IntervalShortHeader...)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(h, "\t"))
	counts := map[string]int{}
	for _, r := range rows {
		c := Cells(r, paths, multi)
		for i := n - 4; i < n; i++ {
			if c[i] == "" {
				c[i] = "-"
			}
		}
		if prov {
			c = append(c, ProvShort(r.Provenance)...)
		}
		c = append(c, IntervalShort(r)...)
		fmt.Fprintln(tw, strings.Join(c, "\t"))
		counts[r.State]++
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "%d runs: %d cached, %d stale, %d missing\n", len(rows), counts[Cached], counts[Stale], counts[Missing])
}

// WriteEvalsCSV writes every evaluation round of rows (ls --evals) as CSV.
func WriteEvalsCSV(w io.Writer, rows []Row) error {
	multi := MultiManifest(rows)
	h := []string{"label", "round", "pooled_pct", "pooled_ft_pct", "client_mean_pct", "client_mean_ft_pct"}
	if multi {
		h = append([]string{"manifest"}, h...)
	}
	logged := hasLogged(rows)
	if logged {
		h = append(h, "logged_pooled_pct", "diff_pct", "logged_pooled_ft_pct", "diff_ft_pct")
	}
	cw := csv.NewWriter(w)
	_ = cw.Write(h)
	full := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range rows {
		for _, e := range r.Evals {
			c := EvalCells(r, e, multi, full)
			if logged {
				c = append(c, loggedCells(e, full, full)...)
			}
			_ = cw.Write(c)
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteEvalsTable writes every evaluation round of rows (ls --evals) as an aligned table
// and a line counting them.
func WriteEvalsTable(w io.Writer, rows []Row) {
	multi := MultiManifest(rows)
	h := []string{"label", "round", "pooled %", "after FT", "client mean %", "after FT"}
	if multi {
		h = append([]string{"manifest"}, h...)
	}
	logged := hasLogged(rows)
	if logged { // the authors' log beside the pooled figures, and kept − logged
		h = append(h, "logged pooled %", "diff", "logged after FT", "diff")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(h, "\t"))
	evals, runs := 0, 0
	two := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	for _, r := range rows {
		if len(r.Evals) > 0 {
			runs++
		}
		for _, e := range r.Evals {
			c := EvalCells(r, e, multi, two)
			if logged {
				c = append(c, loggedCells(e, two, signed)...)
			}
			for i, v := range c {
				if v == "" {
					c[i] = "-"
				}
			}
			fmt.Fprintln(tw, strings.Join(c, "\t"))
			evals++
		}
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "%d evaluations of %d cached runs (%d runs listed)\n", evals, runs, len(rows))
}

// IntervalHeader and IntervalCells are the test-set interval columns ls --csv adds
// after the provenance columns.
var IntervalHeader = []string{"final_pooled_test_set_ci95_lo_pct", "final_pooled_test_set_ci95_hi_pct",
	"final_client_mean_bootstrap_ci95_lo_pct", "final_client_mean_bootstrap_ci95_hi_pct"}

// IntervalCells are row r's test-set interval cells (IntervalHeader).
func IntervalCells(r Row) []string {
	ends := func(iv *stats.Interval) []string {
		if iv == nil {
			return []string{"", ""}
		}
		return []string{Pct(&iv.Lo), Pct(&iv.Hi)}
	}
	return append(ends(r.Intervals.Pooled), ends(r.Intervals.ClientMean)...)
}

// IntervalShortHeader names the table's pair of interval columns: "[lo, hi]" or "-".
var IntervalShortHeader = []string{"final 95% (bootstrap over clients)", "pooled 95% (test set)"}

// IntervalShort is row r's pair of interval cells in the table (IntervalShortHeader).
func IntervalShort(r Row) []string {
	f := func(iv *stats.Interval) string {
		if iv == nil {
			return "-"
		}
		return FormatInterval(*iv)
	}
	return []string{f(r.Intervals.ClientMean), f(r.Intervals.Pooled)}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FormatInterval is "[lo, hi]" with two decimals, or "—" when it cannot be computed.
func FormatInterval(iv stats.Interval) string {
	if !iv.Valid() {
		return "—"
	}
	return fmt.Sprintf("[%.2f, %.2f]", iv.Lo, iv.Hi)
}
