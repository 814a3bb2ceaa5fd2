package main

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/live"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/report/chart"
)

// liveCell is the runs of one cell (a manifest's runs that differ only in their seed).
type liveCell struct {
	Manifest, Cell string
	Runs           []liveRun
	// Rounds is the runs' number of rounds.
	Rounds int
	// Expect are the manifest's published accuracies for the cell's method.
	Expect []manifest.Expectation
}

// cellsOf groups runs into cells, in order of first appearance.
func cellsOf(runs []liveRun, expect map[string][]manifest.Expectation) []*liveCell {
	var cells []*liveCell
	at := map[string]*liveCell{}
	for _, r := range runs {
		id := r.Manifest + "\x00" + r.Cell
		c := at[id]
		if c == nil {
			c = &liveCell{Manifest: r.Manifest, Cell: r.Cell, Rounds: r.node.Run.Train.Rounds}
			for _, e := range expect[r.Manifest] {
				if e.Method == r.node.Run.MethodName && accuracyMetric(e.Metric) && e.Above == "" && e.Shift == "" {
					c.Expect = append(c.Expect, e)
				}
			}
			at[id] = c
			cells = append(cells, c)
		}
		c.Runs = append(c.Runs, r)
	}
	return cells
}

// accuracyMetric reports whether an expect metric is a test accuracy (the curves' y).
func accuracyMetric(m string) bool {
	return strings.HasPrefix(m, "final_") || strings.HasPrefix(m, "best_")
}

// finished reports whether one of the cell's seeds has finished (its published numbers
// are then drawn as reference lines).
func (c *liveCell) finished() bool {
	for _, r := range c.Runs {
		if r.State == live.Finished {
			return true
		}
	}
	return false
}

// points counts the cell's journal points (what a growing curve is made of).
func (c *liveCell) points() int {
	n := 0
	for _, r := range c.Runs {
		if r.Journal != nil {
			n += len(r.Journal.Points)
		}
	}
	return n
}

// version changes whenever a journal of the cell is rewritten or a state changes: the
// cache key of its charts.
func (c *liveCell) version() string {
	var b strings.Builder
	for _, r := range c.Runs {
		fmt.Fprintf(&b, "%s/%s", r.Key, r.State)
		if r.Journal != nil {
			fmt.Fprintf(&b, "/%s/%d", r.Journal.Holder, r.Journal.Seq)
		}
		b.WriteByte(';')
	}
	return b.String()
}

// seedSeries is one figure of a cell's seeds by round: the mean over the seeds that have
// it and, where two or more do, a band of ± one standard deviation.
func seedSeries(name string, runs []liveRun, scale float64, value func(live.Point) (float64, bool)) (chart.Series, bool) {
	by := map[int][]float64{}
	for _, r := range runs {
		if r.Journal == nil {
			continue
		}
		for _, p := range r.Journal.Points {
			if v, ok := value(p); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				by[p.Round] = append(by[p.Round], scale*v)
			}
		}
	}
	if len(by) == 0 {
		return chart.Series{}, false
	}
	rounds := make([]int, 0, len(by))
	for r := range by {
		rounds = append(rounds, r)
	}
	sort.Ints(rounds)
	s := chart.Series{Name: name}
	band := false
	for _, r := range rounds {
		vs := by[r]
		mean := 0.0
		for _, v := range vs {
			mean += v
		}
		mean /= float64(len(vs))
		lo, hi := math.NaN(), math.NaN()
		if len(vs) > 1 {
			sq := 0.0
			for _, v := range vs {
				sq += (v - mean) * (v - mean)
			}
			sd := math.Sqrt(sq / float64(len(vs)-1))
			lo, hi, band = mean-sd, mean+sd, true
		}
		s.X, s.Y = append(s.X, float64(r)), append(s.Y, mean)
		s.Lo, s.Hi = append(s.Lo, lo), append(s.Hi, hi)
	}
	if !band {
		s.Lo, s.Hi = nil, nil
	}
	return s, true
}

// cellCharts are a cell's two curves as SVG: training loss per round, and test accuracy
// before and after fine-tuning with the published numbers as reference lines once a seed
// has finished. A chart with nothing to draw yet is nil.
func cellCharts(c *liveCell) (loss, acc []byte, err error) {
	seeds, n := "", 0
	for _, r := range c.Runs {
		if r.Journal != nil && len(r.Journal.Points) > 0 {
			n++
		}
	}
	if n > 1 {
		seeds = fmt.Sprintf(" (mean ± std, %d seeds)", n)
	}
	if s, ok := seedSeries("training loss"+seeds, c.Runs, 1, func(p live.Point) (float64, bool) {
		if p.TrainLoss == nil {
			return 0, false
		}
		return *p.TrainLoss, true
	}); ok {
		if loss, err = (chart.Line{Title: "Training loss", XLabel: "round", YLabel: "mean client loss", Series: []chart.Series{s}, Width: 5, Height: 3}).Render("svg"); err != nil {
			return nil, nil, err
		}
	}
	var series []chart.Series
	if s, ok := seedSeries("test"+seeds, c.Runs, 100, func(p live.Point) (float64, bool) {
		if p.Eval == nil {
			return 0, false
		}
		return p.Eval.TestAccuracy, true
	}); ok {
		series = append(series, s)
	}
	if s, ok := seedSeries("test after fine-tuning", c.Runs, 100, func(p live.Point) (float64, bool) {
		if p.Eval == nil || p.Eval.TestFTAccuracy == nil {
			return 0, false
		}
		return *p.Eval.TestFTAccuracy, true
	}); ok {
		series = append(series, s)
	}
	if len(series) == 0 {
		return loss, nil, nil
	}
	if c.finished() {
		for _, e := range c.Expect {
			name := fmt.Sprintf("published %s %.2f", e.Metric, e.Published)
			if e.Std > 0 {
				name = fmt.Sprintf("published %s %.2f ± %.2f", e.Metric, e.Published, e.Std)
			}
			series = append(series, chart.Series{Name: name, X: []float64{1, float64(c.Rounds)}, Y: []float64{e.Published, e.Published}})
		}
	}
	acc, err = (chart.Line{Title: "Test accuracy", XLabel: "round", YLabel: "mean client accuracy (%)", Series: series, Width: 5, Height: 3}).Render("svg")
	return loss, acc, err
}
