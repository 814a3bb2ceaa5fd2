package summary

import (
	"fmt"
	"math"
	"strings"

	"github.com/fedpipe/fedpipe/results"
)

// Entry is one run's summary with its labels.
type Entry struct {
	Run    string // the run's label
	Config string // the run's label without the seed
	// Display is Config as tables print it, with the method's registered display name
	// ("FedAvg lr=0.1" for "fedavg lr=0.1"); empty means Config.
	Display string
	Method  string
	Seed    int64
	Summary
}

// Row is one configuration of the run table, its seeds folded together: each figure is
// averaged over seeds; PooledStd is the std over seeds of the final pooled accuracy.
type Row struct {
	Config                             string
	Display                            string // Config as printed (Entry.Display)
	Seeds, Clients                     int
	Mean, Std, Pooled, PooledStd, Best float64
	// BestRounds lists each seed's round of its best pooled accuracy.
	BestRounds []int
	// FT says whether the runs fine-tune before evaluating; FTPooled and FTBest are then
	// the final and best pooled accuracy after fine-tuning (the figures above are before).
	FT               bool
	FTPooled, FTBest float64
}

// Rows folds entries by configuration, in order of first appearance.
func Rows(entries []Entry) []Row {
	var out []Row
	for _, g := range groups(entries) {
		var mean, std, pooled, best, ftPooled, ftBest []float64
		var rounds []int
		for _, e := range g {
			if e.FT.Has != 0 {
				ftPooled = append(ftPooled, e.FT.Pooled)
				ftBest = append(ftBest, e.FT.BestPooled)
			}
			mean = append(mean, e.Mean)
			std = append(std, e.Std)
			pooled = append(pooled, e.Pooled)
			best = append(best, e.Best.Pooled)
			rounds = append(rounds, e.Best.PooledRound)
		}
		out = append(out, Row{Config: g[0].Config, Display: g[0].Display, Seeds: len(g), Clients: g[0].Clients, Mean: Mean(mean), Std: Mean(std),
			Pooled: Mean(pooled), PooledStd: Std(pooled), Best: Mean(best), BestRounds: rounds})
		if len(ftPooled) == len(g) {
			r := &out[len(out)-1]
			r.FT, r.FTPooled, r.FTBest = true, Mean(ftPooled), Mean(ftBest)
		}
	}
	return out
}

// Cells formats a row for a table, in percent: configuration (its display form), seeds, clients, final mean ±
// std over clients, final pooled (± std over seeds when there are several), best pooled @
// rounds, all before fine-tuning; then final and best pooled after fine-tuning ("—" for
// runs that do not fine-tune).
func (r Row) Cells() []string {
	pooled := fmt.Sprintf("%.2f", 100*r.Pooled)
	if r.Seeds > 1 {
		pooled += fmt.Sprintf(" ± %.2f", 100*r.PooledStd)
	}
	rounds := make([]string, len(r.BestRounds))
	for i, x := range r.BestRounds {
		rounds[i] = fmt.Sprint(x)
	}
	ft := "—"
	if r.FT {
		ft = fmt.Sprintf("%.2f / %.2f", 100*r.FTPooled, 100*r.FTBest)
	}
	name := r.Display
	if name == "" {
		name = r.Config
	}
	return []string{name, fmt.Sprint(r.Seeds), fmt.Sprint(r.Clients), fmt.Sprintf("%.2f ± %.2f", 100*r.Mean, 100*r.Std),
		pooled, fmt.Sprintf("%.2f @ %s", 100*r.Best, strings.Join(rounds, ",")), ft}
}

// Markdown renders one row per configuration (seeds folded together, see Rows): final
// accuracy as the mean ± std over clients and pooled over all test samples, and the best
// pooled accuracy seen at the evaluation rounds during training with its round, before
// fine-tuning; then, for runs that fine-tune, the final and best pooled accuracy after.
func Markdown(title, description string, entries []Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", title)
	if description != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(description))
	}
	b.WriteString("| method | seeds | clients | final accuracy, client mean ± std over clients (%; both averaged over seeds) | final accuracy, pooled over test samples (%; mean ± std over seeds where several) | best pooled accuracy during training (%; mean over seeds) @ round of each seed | after fine-tuning: final / best pooled (%; mean over seeds) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range Rows(entries) {
		fmt.Fprintf(&b, "| %s |\n", strings.Join(r.Cells(), " | "))
	}
	return b.String()
}

// groups collects entries by configuration, in order of first appearance.
func groups(entries []Entry) [][]Entry {
	var out [][]Entry
	at := map[string]int{}
	for _, e := range entries {
		i, ok := at[e.Config]
		if !ok {
			i = len(out)
			at[e.Config] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], e)
	}
	return out
}

// Mean is the arithmetic mean of v.
func Mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// Std is the population standard deviation of v (ddof = 0).
func Std(v []float64) float64 {
	m := Mean(v)
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(v)))
}

// Runs lays entries out as rows of the stage's `runs` table, one per run.
func Runs(entries []Entry) []results.Run {
	rows := make([]results.Run, len(entries))
	for i, e := range entries {
		rows[i] = results.Run{Run: e.Run, Config: e.Config, Method: e.Method, Seed: e.Seed, Clients: e.Clients,
			Mean: e.Mean, Std: e.Std, Pooled: e.Pooled, BestPooled: e.Best.Pooled}
	}
	return rows
}

// ShiftEntry is one run's accuracy under each test-time shift.
type ShiftEntry struct {
	Config  string
	Display string // Config as tables print it (see Entry.Display); empty means Config
	Rows    []ShiftRow
}

// ShiftRow is one shift's summary: accuracy mean ± std over clients (and pooled), with,
// under a real CIFAR-10-C corruption, the counts of test samples replaced by their own
// CIFAR-10-C version and by a same-class draw (0 elsewhere).
type ShiftRow = results.ShiftSummary

// DecodeShiftEntry reads a shift stage's summary table (the run's configuration in its
// metadata's "config").
func DecodeShiftEntry(b []byte) (ShiftEntry, error) {
	rows, meta, err := results.Decode[results.ShiftSummary](b)
	if err != nil {
		return ShiftEntry{}, err
	}
	return ShiftEntry{Config: meta["config"], Rows: rows}, nil
}

// Grid is a table ready to be rendered: a title, a header, and rows of cells, the first
// Text of them words (left-aligned), the rest numbers.
type Grid struct {
	Title string
	Head  []string
	Text  int
	Rows  [][]string
}

// Markdown renders the grid under a level-3 heading.
func (g Grid) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n### %s\n\n| %s |\n|", g.Title, strings.Join(g.Head, " | "))
	b.WriteString(strings.Repeat("---|", g.Text) + strings.Repeat("---:|", len(g.Head)-g.Text) + "\n")
	for _, r := range g.Rows {
		fmt.Fprintf(&b, "| %s |\n", strings.Join(r, " | "))
	}
	return b.String()
}

// ShiftGrids lays accuracy under shift out as one table with a column per shift degree
// (DM-PFL Table 1), one per label-shift concentration, one with a row per method and
// corruption and a column per severity, and the same for the real CIFAR-10-C corruptions
// (kinds "cifar10c:<name>"), whose title says what share of the test samples were their
// own CIFAR-10-C versions. Runs of the same configuration (seeds) are averaged; a missing
// cell is "—".
func ShiftGrids(entries []ShiftEntry) []Grid {
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
		if cells[e.Config] == nil {
			cells[e.Config] = map[string]*cell{}
			configs = append(configs, e.Config)
			display[e.Config] = e.Config
			if e.Display != "" {
				display[e.Config] = e.Display
			}
		}
		for _, r := range e.Rows {
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

// ShiftMarkdown renders ShiftGrids as markdown ("" without entries).
func ShiftMarkdown(entries []ShiftEntry) string {
	var b strings.Builder
	for _, g := range ShiftGrids(entries) {
		b.WriteString(g.Markdown())
	}
	return b.String()
}
