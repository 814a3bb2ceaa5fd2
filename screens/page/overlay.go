package page

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/live"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/screens/watch"
)

// Palette is the colours of the curves, in order of the curves' first appearance (past
// its end they repeat).
var Palette = []string{"#e6550d", "#3182bd", "#31a354", "#756bb1", "#d6616b", "#8c6d31", "#17becf", "#bcbd22", "#7f7f7f", "#393b79"}

// Curve is one cell of runs (a manifest's runs that differ only in their seed): what one
// line of each chart is made of.
type Curve struct {
	// Name is the method's display name with the cell's other settings; Color its colour.
	Name, Color string
	Manifest    string
	// Method is the registered method name (its published numbers are found by it).
	Method string
	// Runs are the cell's seeds; Seeds is how many (the most any round can have).
	Runs  []watch.Run
	Seeds int
	// Rounds is the cell's train.rounds.
	Rounds int
}

// Points counts the points of the cell's curves (its runs' own and carried rounds).
func (c *Curve) Points() int {
	n := 0
	for _, r := range c.Runs {
		n += len(r.Points())
	}
	return n
}

// Finished reports whether one seed (some: true) or every seed (some: false) has finished.
func (c *Curve) Finished(some bool) bool {
	for _, r := range c.Runs {
		if (r.State == live.Finished) == some {
			return some
		}
	}
	return !some
}

// Curves groups runs into curves, in order of first appearance, naming each by its
// method's display name and the settings its grid varies (and by its manifest when the
// runs come from several).
func Curves(runs []watch.Run) []*Curve {
	var out []*Curve
	at := map[string]*Curve{}
	manifests := map[string]bool{}
	for _, r := range runs {
		manifests[r.Manifest] = true
	}
	for _, r := range runs {
		id := r.Manifest + "\x00" + r.Cell
		c := at[id]
		if c == nil {
			name := manifest.LabelAs(r.Cell, r.Method, r.Display)
			if len(manifests) > 1 {
				name += " (" + strings.TrimSuffix(filepath.Base(r.Manifest), filepath.Ext(r.Manifest)) + ")"
			}
			c = &Curve{Name: name, Color: Palette[len(out)%len(Palette)], Manifest: r.Manifest, Method: r.Method, Rounds: r.Rounds}
			at[id] = c
			out = append(out, c)
		}
		c.Runs = append(c.Runs, r)
		c.Seeds++
		c.Rounds = max(c.Rounds, r.Rounds)
	}
	return out
}

// Metric is one figure the journals carry, drawn as one chart.
type Metric struct {
	ID, Title, YLabel string
	// Scale multiplies the value (100: a fraction shown as a percentage).
	Scale float64
	Value func(live.Point) (float64, bool)
	// Accuracy: the published accuracies are drawn on it as reference lines.
	Accuracy bool
}

// Metrics are the charts of the page, in order.
var Metrics = []Metric{
	{ID: "train_loss", Title: "Training loss", YLabel: "mean client loss", Scale: 1, Value: func(p live.Point) (float64, bool) {
		if p.TrainLoss == nil {
			return 0, false
		}
		return *p.TrainLoss, true
	}},
	{ID: "test_accuracy", Title: "Test accuracy", YLabel: "mean client accuracy (%)", Scale: 100, Accuracy: true, Value: func(p live.Point) (float64, bool) {
		if p.Eval == nil {
			return 0, false
		}
		return p.Eval.TestAccuracy, true
	}},
	{ID: "test_ft_accuracy", Title: "Test accuracy after fine-tuning", YLabel: "mean client accuracy (%)", Scale: 100, Accuracy: true, Value: func(p live.Point) (float64, bool) {
		if p.Eval == nil || p.Eval.TestFTAccuracy == nil {
			return 0, false
		}
		return *p.Eval.TestFTAccuracy, true
	}},
	{ID: "test_loss", Title: "Test loss", YLabel: "mean client loss", Scale: 1, Value: func(p live.Point) (float64, bool) {
		if p.Eval == nil {
			return 0, false
		}
		return p.Eval.TestLoss, true
	}},
}

// Stat is one round of a curve over its seeds: the mean and the range (min–max) of the
// seeds that have the round, and how many do.
type Stat struct {
	Round          int
	Mean, Min, Max float64
	N              int
}

// Line is one curve's statistics on one chart.
type Line struct {
	Curve *Curve
	Stats []Stat
}

// Ref is a published number drawn as a horizontal line in its curve's colour.
type Ref struct {
	Curve *Curve
	Label string
	Value float64
}

// Chart is one metric with every curve that has it.
type Chart struct {
	Metric Metric
	Lines  []Line
	Refs   []Ref
	// Rounds is the x axis' last round: the longest curve's train.rounds.
	Rounds int
}

// Stats is a curve's metric by round over its seeds (none when no seed has it yet).
func Stats(c *Curve, m Metric) []Stat {
	by := map[int][]float64{}
	for _, r := range c.Runs {
		for _, p := range r.Points() {
			if v, ok := m.Value(p); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				by[p.Round] = append(by[p.Round], m.Scale*v)
			}
		}
	}
	out := make([]Stat, 0, len(by))
	for round, vs := range by {
		s := Stat{Round: round, Min: vs[0], Max: vs[0], N: len(vs)}
		for _, v := range vs {
			s.Mean += v
			s.Min, s.Max = min(s.Min, v), max(s.Max, v)
		}
		s.Mean /= float64(len(vs))
		out = append(out, s)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Round < out[b].Round })
	return out
}

// Charts are the page's charts: one per metric some curve has, every curve overlaid, with
// the published accuracies of a curve one of whose seeds has finished as reference lines
// (expect: each manifest's expectations by manifest file).
func Charts(curves []*Curve, expect map[string][]manifest.Expectation) []Chart {
	var out []Chart
	for _, m := range Metrics {
		ch := Chart{Metric: m}
		for _, c := range curves {
			ch.Rounds = max(ch.Rounds, c.Rounds)
			if s := Stats(c, m); len(s) > 0 {
				ch.Lines = append(ch.Lines, Line{Curve: c, Stats: s})
			}
		}
		if len(ch.Lines) == 0 {
			continue
		}
		if m.ID == "test_accuracy" {
			for _, c := range curves {
				if !c.Finished(true) {
					continue
				}
				for _, e := range expect[c.Manifest] {
					if e.Method == c.Method && accuracyMetric(e.Metric) && e.Above == "" && e.Shift == "" {
						label := fmt.Sprintf("%s published %s %.2f", c.Name, e.Metric, e.Published)
						if e.Std > 0 {
							label += fmt.Sprintf(" ± %.2f", e.Std)
						}
						ch.Refs = append(ch.Refs, Ref{Curve: c, Label: label, Value: e.Published})
					}
				}
			}
		}
		out = append(out, ch)
	}
	return out
}

// accuracyMetric reports whether an expect metric is a test accuracy (the curves' y).
func accuracyMetric(m string) bool {
	return strings.HasPrefix(m, "final_") || strings.HasPrefix(m, "best_")
}

// FewerSeeds says, for a line whose curve has more than one seed, the rounds that fewer
// seeds than the curve's have, as ranges: "2 of 3 seeds at rounds 21–40" ("" when every
// round has them all).
func FewerSeeds(l Line) string {
	var parts []string
	for i := 0; i < len(l.Stats); {
		s := l.Stats[i]
		if s.N >= l.Curve.Seeds {
			i++
			continue
		}
		j := i
		for j+1 < len(l.Stats) && l.Stats[j+1].N == s.N {
			j++
		}
		rounds := fmt.Sprintf("round %d", s.Round)
		if j > i {
			rounds = fmt.Sprintf("rounds %d–%d", s.Round, l.Stats[j].Round)
		}
		parts = append(parts, fmt.Sprintf("%d of %d seeds at %s", s.N, l.Curve.Seeds, rounds))
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
