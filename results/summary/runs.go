package summary

import (
	"fmt"
	"math"
	"strings"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/results"
)

// Entry is one run with its labels and what the store holds of its results, the one input
// every report table (Tables) is built from. EntryOf makes it; SetSummary and SetShift add
// the results as they are read.
type Entry struct {
	Run    string // the run's label
	Config string // the run's label without the seed
	// Display is Config as tables print it, with the method's registered display name
	// ("FedAvg lr=0.1" for "fedavg lr=0.1"); empty means Config.
	Display string
	Method  string
	Seed    int64
	// Evaluated says whether Summary holds the run's evaluate summary (false: not computed).
	Evaluated bool
	Summary
	// Cost is the run's cost per client, read with its summary (nil: not computed, or the
	// summary records none).
	Cost *Cost
	// Shifted says whether Shift holds the run's shift summary (false: not computed, or the
	// manifest has no shift).
	Shifted bool
	Shift   []ShiftRow
}

// EntryOf is run r's entry before any result is read, its configuration labelled config:
// r.Config(), or that after the manifest's label when a report covers several manifests.
func EntryOf(r *manifest.Run, config string) Entry {
	return Entry{Run: r.Label(), Config: config, Display: manifest.DisplayLabel(config, r.Method), Method: r.Method, Seed: r.Seed}
}

// SetSummary records the run's evaluate summary and the cost its metadata carries (see
// CostOf; FedAvg, its method's manifest.MethodDef.CostReference, is the reference).
func (e *Entry) SetSummary(s Summary, meta map[string]string) {
	e.Evaluated, e.Summary, e.Cost = true, s, nil
	if c, ok := CostOf(meta, manifest.CostReference(e.Method)); ok {
		e.Cost = &c
	}
}

// SetShift records the run's shift summary (the rows of its shift stage's summary table).
func (e *Entry) SetShift(rows []ShiftRow) { e.Shifted, e.Shift = true, rows }

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

// Rows folds entries by configuration, in order of first appearance; every entry is taken
// as evaluated (the runs table passes those that are).
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
