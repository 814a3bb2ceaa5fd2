package summary

import (
	"fmt"
	"strings"

	"github.com/fedpipe/fedpipe/results"
)

// ShiftRow is one shift's summary: accuracy mean ± std over clients (and pooled), with,
// under a real CIFAR-10-C corruption, the counts of test samples replaced by their own
// CIFAR-10-C version and by a same-class draw (0 elsewhere).
type ShiftRow = results.ShiftSummary

// ShiftGrids lays accuracy under shift out as one table with a column per shift degree
// (DM-PFL Table 1), one per label-shift concentration, one with a row per method and
// corruption and a column per severity, and the same for the real CIFAR-10-C corruptions
// (kinds "cifar10c:<name>"), whose title says what share of the test samples were their
// own CIFAR-10-C versions. It reads the entries with a shift summary (Entry.Shifted); runs
// of the same configuration (seeds) are averaged; a missing cell is "—".
func ShiftGrids(entries []Entry) []Grid {
	type cell struct{ mean, std []float64 }
	var configs []string
	display := map[string]string{}         // config → its printed form
	cells := map[string]map[string]*cell{} // config → "shift|level" → values
	var degrees, severities, alphas []float64
	var corruptions, c10c []string
	var c10cSeverities []float64
	var own, drawn int
	seen := map[string]bool{}
	for _, e := range entries {
		if !e.Shifted {
			continue
		}
		if cells[e.Config] == nil {
			cells[e.Config] = map[string]*cell{}
			configs = append(configs, e.Config)
			display[e.Config] = e.Config
			if e.Display != "" {
				display[e.Config] = e.Display
			}
		}
		for _, r := range e.Shift {
			k := fmt.Sprintf("%s|%v", r.Shift, r.Level)
			if cells[e.Config][k] == nil {
				cells[e.Config][k] = &cell{}
			}
			c := cells[e.Config][k]
			c.mean, c.std = append(c.mean, r.Mean), append(c.std, r.Std)
			own, drawn = own+r.Own, drawn+r.Drawn
			if !seen[k] {
				seen[k] = true
				if r.Shift == "degree" {
					degrees = append(degrees, r.Level)
				} else if r.Shift == "label" {
					alphas = append(alphas, r.Level)
				} else if name, ok := strings.CutPrefix(r.Shift, "cifar10c:"); ok {
					if !seen["r|"+name] {
						seen["r|"+name] = true
						c10c = append(c10c, name)
					}
					if !seen[fmt.Sprintf("rs|%v", r.Level)] {
						seen[fmt.Sprintf("rs|%v", r.Level)] = true
						c10cSeverities = append(c10cSeverities, r.Level)
					}
				} else {
					if !seen["c|"+r.Shift] {
						seen["c|"+r.Shift] = true
						corruptions = append(corruptions, r.Shift)
					}
					if !seen[fmt.Sprintf("s|%v", r.Level)] {
						seen[fmt.Sprintf("s|%v", r.Level)] = true
						severities = append(severities, r.Level)
					}
				}
			}
		}
	}
	fmtCell := func(c *cell) string {
		if c == nil {
			return "—"
		}
		return fmt.Sprintf("%.2f ± %.2f", 100*Mean(c.mean), 100*Mean(c.std))
	}
	// byLevel has a row per configuration and a column per level of one shift kind.
	byLevel := func(title, kind string, head func(float64) string, levels []float64) Grid {
		g := Grid{Title: title, Head: []string{"method"}, Text: 1}
		for _, l := range levels {
			g.Head = append(g.Head, head(l))
		}
		for _, cfg := range configs {
			row := []string{display[cfg]}
			for _, l := range levels {
				row = append(row, fmtCell(cells[cfg][fmt.Sprintf("%s|%v", kind, l)]))
			}
			g.Rows = append(g.Rows, row)
		}
		return g
	}
	// bySeverity has a row per configuration and corruption (kind prefix+name) and a column
	// per severity.
	bySeverity := func(title, prefix string, names []string, levels []float64) Grid {
		g := Grid{Title: title, Head: []string{"method", "corruption"}, Text: 2}
		for _, l := range levels {
			g.Head = append(g.Head, fmt.Sprint(l))
		}
		for _, cfg := range configs {
			for _, name := range names {
				row := []string{display[cfg], name}
				for _, l := range levels {
					row = append(row, fmtCell(cells[cfg][fmt.Sprintf("%s%s|%v", prefix, name, l)]))
				}
				g.Rows = append(g.Rows, row)
			}
		}
		return g
	}
	var out []Grid
	if len(degrees) > 0 {
		out = append(out, byLevel("Accuracy under shift degree d (mean ± std over clients, %)", "degree",
			func(d float64) string { return fmt.Sprintf("d = %v", d) }, degrees))
	}
	if len(alphas) > 0 {
		out = append(out, byLevel("Accuracy under label shift, Dirichlet concentration α (mean ± std over clients, %)", "label",
			func(a float64) string { return fmt.Sprintf("α = %v", a) }, alphas))
	}
	if len(corruptions) > 0 {
		out = append(out, bySeverity("Accuracy under corruption, by severity (mean ± std over clients, %)", "", corruptions, severities))
	}
	if len(c10c) > 0 {
		title := "Accuracy under CIFAR-10-C (the release's files), by severity (mean ± std over clients, %)"
		if own+drawn > 0 {
			title += fmt.Sprintf("; %.1f%% of test samples are their own CIFAR-10-C version, the rest same-class draws", 100*float64(own)/float64(own+drawn))
		}
		out = append(out, bySeverity(title, "cifar10c:", c10c, c10cSeverities))
	}
	return out
}
