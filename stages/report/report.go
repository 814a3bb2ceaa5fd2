// Package report lays the runs' summaries out as a markdown table for the terminal and
// for pasting into a paper, and as a table of one row per run.
package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/stages/evaluate"
)

// Entry is one run's summary with its labels.
type Entry struct {
	Config string // the run's label without the seed
	Method string
	Seed   int64
	evaluate.Summary
}

// Markdown renders one row per configuration (seeds folded together): final accuracy as the
// mean ± std over clients and pooled over all test samples, and the best pooled accuracy
// seen at the evaluation rounds during training with its round; with several seeds, each
// figure is averaged over seeds and the final pooled figure's std over seeds is shown.
func Markdown(title, description string, entries []Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", title)
	if description != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(description))
	}
	b.WriteString("| method | seeds | clients | final accuracy, mean ± std over clients (%) | final accuracy, pooled over test samples (%) | best pooled accuracy during training (%) @ round |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|\n")
	for _, g := range groups(entries) {
		var mean, std, pooled, best []float64
		var rounds []string
		for _, e := range g {
			mean = append(mean, e.Mean)
			std = append(std, e.Std)
			pooled = append(pooled, e.Pooled)
			best = append(best, e.Best.Pooled)
			rounds = append(rounds, fmt.Sprint(e.Best.PooledRound))
		}
		pooledCell := fmt.Sprintf("%.2f", 100*avg(pooled))
		if len(g) > 1 {
			pooledCell += fmt.Sprintf(" ± %.2f", 100*sd(pooled))
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %.2f ± %.2f | %s | %.2f @ %s |\n", g[0].Config, len(g), g[0].Clients,
			100*avg(mean), 100*avg(std), pooledCell, 100*avg(best), strings.Join(rounds, ","))
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

func avg(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func sd(v []float64) float64 {
	m := avg(v)
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(v)))
}

// Table has one row per run: config, method, seed, clients, and the accuracy figures.
func Table(entries []Entry) *table.Table {
	var config, method []string
	var seed, clients []int64
	var mean, std, pooled, best []float64
	for _, e := range entries {
		best = append(best, e.Best.Pooled)
		config = append(config, e.Config)
		method = append(method, e.Method)
		seed = append(seed, e.Seed)
		clients = append(clients, int64(e.Clients))
		mean = append(mean, e.Mean)
		std = append(std, e.Std)
		pooled = append(pooled, e.Pooled)
	}
	return &table.Table{Columns: []table.Column{
		table.StringCol("config", config),
		table.StringCol("method", method),
		table.Int64Col("seed", seed),
		table.Int64Col("clients", clients),
		table.Float64Col("accuracy_client_mean", mean),
		table.Float64Col("accuracy_client_std", std),
		table.Float64Col("accuracy_pooled", pooled),
		table.Float64Col("best_accuracy_pooled", best),
	}}
}

// ShiftEntry is one run's accuracy under each test-time shift.
type ShiftEntry struct {
	Config string
	Rows   []ShiftRow
}

// ShiftRow is one shift's summary: accuracy mean ± std over clients.
type ShiftRow struct {
	Shift     string // "degree" or a corruption name
	Level     float64
	Mean, Std float64
}

// ShiftMarkdown renders accuracy under shift: one table with a column per shift degree
// (DM-PFL Table 1) and one with a row per method and corruption and a column per severity.
// Runs of the same configuration (seeds) are averaged.
func ShiftMarkdown(entries []ShiftEntry) string {
	if len(entries) == 0 {
		return ""
	}
	type cell struct{ mean, std []float64 }
	var configs []string
	cells := map[string]map[string]*cell{} // config → "shift|level" → values
	var degrees, severities, alphas []float64
	var corruptions []string
	seen := map[string]bool{}
	for _, e := range entries {
		if cells[e.Config] == nil {
			cells[e.Config] = map[string]*cell{}
			configs = append(configs, e.Config)
		}
		for _, r := range e.Rows {
			k := fmt.Sprintf("%s|%v", r.Shift, r.Level)
			if cells[e.Config][k] == nil {
				cells[e.Config][k] = &cell{}
			}
			c := cells[e.Config][k]
			c.mean, c.std = append(c.mean, r.Mean), append(c.std, r.Std)
			if !seen[k] {
				seen[k] = true
				if r.Shift == "degree" {
					degrees = append(degrees, r.Level)
				} else if r.Shift == "label" {
					alphas = append(alphas, r.Level)
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
		return fmt.Sprintf("%.2f ± %.2f", 100*avg(c.mean), 100*avg(c.std))
	}
	var b strings.Builder
	if len(degrees) > 0 {
		b.WriteString("\n### Accuracy under shift degree d (mean ± std over clients, %)\n\n| method |")
		for _, d := range degrees {
			fmt.Fprintf(&b, " d = %v |", d)
		}
		b.WriteString("\n|---|" + strings.Repeat("---:|", len(degrees)) + "\n")
		for _, cfg := range configs {
			fmt.Fprintf(&b, "| %s |", cfg)
			for _, d := range degrees {
				fmt.Fprintf(&b, " %s |", fmtCell(cells[cfg][fmt.Sprintf("degree|%v", d)]))
			}
			b.WriteString("\n")
		}
	}
	if len(alphas) > 0 {
		b.WriteString("\n### Accuracy under label shift, Dirichlet concentration α (mean ± std over clients, %)\n\n| method |")
		for _, a := range alphas {
			fmt.Fprintf(&b, " α = %v |", a)
		}
		b.WriteString("\n|---|" + strings.Repeat("---:|", len(alphas)) + "\n")
		for _, cfg := range configs {
			fmt.Fprintf(&b, "| %s |", cfg)
			for _, a := range alphas {
				fmt.Fprintf(&b, " %s |", fmtCell(cells[cfg][fmt.Sprintf("label|%v", a)]))
			}
			b.WriteString("\n")
		}
	}
	if len(corruptions) > 0 {
		b.WriteString("\n### Accuracy under corruption, by severity (mean ± std over clients, %)\n\n| method | corruption |")
		for _, s := range severities {
			fmt.Fprintf(&b, " %v |", s)
		}
		b.WriteString("\n|---|---|" + strings.Repeat("---:|", len(severities)) + "\n")
		for _, cfg := range configs {
			for _, name := range corruptions {
				fmt.Fprintf(&b, "| %s | %s |", cfg, name)
				for _, s := range severities {
					fmt.Fprintf(&b, " %s |", fmtCell(cells[cfg][fmt.Sprintf("%s|%v", name, s)]))
				}
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}
