package site

import (
	"fmt"
	"html"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/report/chart"
	"github.com/fedpipe/fedpipe/results/summary"
)

// Figure is one plot: what it draws, its SVG and the table of the numbers it draws.
type Figure struct {
	// Name is the file name without extension, e.g. "accuracy-rounds".
	Name    string
	Title   string
	Caption string
	// SVG is the figure as an SVG document (the page inlines it).
	SVG   string
	Chart chart.Chart
	Data  *table.Table
}

// Render draws the figure as a document of format: "svg", "png" (chart.PNGScale times
// the SVG's size, for slides) or "pdf" (for LaTeX). The bitmaps and PDFs are drawn on
// demand (not kept in the Site) because a large report's would otherwise all sit in
// memory at once.
func (f Figure) Render(format string) ([]byte, error) {
	if format == "svg" && f.SVG != "" {
		return []byte(f.SVG), nil
	}
	b, err := f.Chart.Render(format)
	if err != nil {
		return nil, fmt.Errorf("figure %s: %w", f.Name, err)
	}
	return b, nil
}

// inlineSVG is an SVG document without its XML prolog, to be placed in an HTML page.
func inlineSVG(svg string) string {
	if i := strings.Index(svg, "<svg"); i >= 0 {
		return svg[i:]
	}
	return svg
}

// figureFormats checks the figure formats asked for and puts them in chart.Formats'
// order; none asked: DefaultFormats.
func figureFormats(asked []string) ([]string, error) {
	if len(asked) == 0 {
		return DefaultFormats, nil
	}
	for _, f := range asked {
		if !slices.Contains(chart.Formats, f) {
			return nil, fmt.Errorf("site: figure format %q: want %s", f, strings.Join(chart.Formats, ", "))
		}
	}
	var out []string
	for _, f := range chart.Formats {
		if slices.Contains(asked, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// pageImage is the format the markdown shows a figure in: SVG, else PNG, else none.
func (s *Site) pageImage() string {
	for _, f := range []string{"svg", "png"} {
		if slices.Contains(s.Formats, f) {
			return f
		}
	}
	return ""
}

// formatUse says what each figure file is for, after its link.
var formatUse = map[string]string{"svg": "", "png": " for slides", "pdf": " for LaTeX"}

// fileLinks links a figure's files (Site.Formats), as markdown or as HTML.
func (s *Site) fileLinks(name string, markdown bool) string {
	var b strings.Builder
	for _, f := range s.Formats {
		up := strings.ToUpper(f)
		if markdown {
			fmt.Fprintf(&b, " [%s](figures/%s.%s)%s.", up, name, f, formatUse[f])
		} else {
			fmt.Fprintf(&b, ` <a class="file" href="figures/%s.%s">%s</a>`, html.EscapeString(name), f, up)
		}
	}
	return b.String()
}

// fileName makes a label safe as part of a file name.
func fileName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '-':
			b.WriteRune(r)
		case r == '=' || r == ' ' || r == '_' || r == '/' || r == ':':
			b.WriteRune('_')
		}
	}
	return strings.Trim(b.String(), "_")
}

// figName joins a figure kind and the labels that select its data.
func figName(kind string, parts ...string) string {
	for _, p := range parts {
		if p != "" {
			kind += "-" + fileName(p)
		}
	}
	return kind
}

// inCell returns the runs of one results-table column, grouped by row in row order.
func (c *collected) inCell(col string) (rows []string, by map[string][]*run) {
	by = map[string][]*run{}
	for _, x := range c.runs {
		if x.col == col {
			by[x.row] = append(by[x.row], x)
		}
	}
	for _, r := range c.rows {
		if len(by[r]) > 0 {
			rows = append(rows, r)
		}
	}
	return rows, by
}

func titleIn(title, col string) string {
	if col == "" {
		return title
	}
	return title + " (" + col + ")"
}

// accuracyRounds draws test accuracy (mean over clients, then over seeds) per round and
// method, with a band of ± the std over seeds where there are several: FedSelect Fig. 2.
// Several grid cells make one figure with a panel per cell, sharing the y range and the
// legend; the legend names methods as their papers do (manifest.DisplayLabel) and the caption says
// the manifest's own setting (setting).
func (c *collected) accuracyRounds() []Figure {
	var lines []chart.Line
	var data []roundAccuracy
	var drawn []*run
	for _, col := range c.cols {
		rows, by := c.inCell(col)
		var series []chart.Series
		for _, row := range rows {
			perRound := map[int][]float64{}
			for _, x := range by[row] {
				sum, n := map[int]float64{}, map[int]int{}
				for _, m := range x.metrics {
					if m.Split == "test" {
						sum[m.Round] += m.Accuracy
						n[m.Round]++
					}
				}
				for r, s := range sum {
					perRound[r] = append(perRound[r], 100*s/float64(n[r]))
				}
				if len(sum) > 0 {
					drawn = append(drawn, x)
				}
			}
			if len(perRound) == 0 {
				continue
			}
			s := chart.Series{Name: c.display(row)}
			for _, r := range sortedKeys(perRound) {
				mean, std := summary.Mean(perRound[r]), math.NaN()
				if len(perRound[r]) > 1 {
					std = summary.Std(perRound[r])
				}
				s.X = append(s.X, float64(r))
				s.Y = append(s.Y, mean)
				s.Lo, s.Hi = append(s.Lo, mean-std), append(s.Hi, mean+std)
				data = append(data, roundAccuracy{Cell: col, Method: row, Display: c.display(row), Round: r, Accuracy: mean, Std: std})
			}
			series = append(series, s)
		}
		if len(series) > 0 {
			// The x axis spans the runs' rounds, from the first to the last, however few
			// were evaluated (eval_every 5 over 5 rounds: rounds 1 to 5, not 4 to 6 around two dots).
			last := 0
			for _, x := range drawn {
				last = max(last, x.r.Train.Rounds)
			}
			lines = append(lines, chart.Line{Title: col, XLabel: "round", YLabel: "test accuracy (%)", Series: series, XLo: 1, XHi: float64(last)})
		}
	}
	if len(lines) == 0 {
		return nil
	}
	caption := "Test accuracy at each evaluation round: the mean over clients of each client's accuracy on its own test split, " +
		"averaged over seeds, with a band of ± the std over seeds where there are several. " + c.setting(drawn) + "."
	title := "Test accuracy per round"
	if len(lines) == 1 {
		line := lines[0]
		if line.Title != "" {
			caption += " Grid cell " + line.Title + "."
		}
		title, line.Title = titleIn(title, line.Title), "" // the caption carries it
		return []Figure{{Name: figName("accuracy-rounds", lines[0].Title), Title: title, Caption: caption, Chart: line, Data: summary.DataTable(data, nil)}}
	}
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, d := range data {
		lo, hi := d.Accuracy, d.Accuracy
		if !math.IsNaN(d.Std) {
			lo, hi = lo-d.Std, hi+d.Std
		}
		ylo, yhi = math.Min(ylo, lo), math.Max(yhi, hi)
	}
	cells := make([]string, len(lines))
	for i := range lines {
		cells[i] = lines[i].Title
		if ylo < yhi {
			lines[i].YLo, lines[i].YHi = ylo, yhi
		}
	}
	caption += " One panel per grid cell (" + strings.Join(cells, "; ") + "), on a shared y axis."
	return []Figure{{Name: "accuracy-rounds", Title: title, Caption: caption, Chart: chart.Panels{Lines: lines}, Data: summary.DataTable(data, nil)}}
}

// firstSeed returns, per configuration (row, col), the run with the lowest seed that has
// the data has() asks for.
func (c *collected) firstSeed(has func(*run) bool) []*run {
	best := map[string]*run{}
	var order []string
	for _, x := range c.runs {
		if !has(x) {
			continue
		}
		k := x.row + "\x00" + x.col
		if b, ok := best[k]; !ok {
			best[k] = x
			order = append(order, k)
		} else if x.r.Seed < b.r.Seed {
			best[k] = x
		}
	}
	out := make([]*run, len(order))
	for i, k := range order {
		out[i] = best[k]
	}
	return out
}

// Bounds that keep a report of a large sweep readable (and its file small); the tables
// written beside the figures always hold all the data.
const (
	// maxPanels bounds the heatmap panels (layers) drawn per run.
	maxPanels = 8
	// maxMatrix bounds the clients drawn in a mask-IoU heatmap.
	maxMatrix = 40
	// maxRunFigures bounds the per-configuration figures (masks, selections) of one kind.
	maxRunFigures = 12
)

// capRuns keeps the first maxRunFigures runs, saying in note how many were left out.
func capRuns(runs []*run, kind string, notes *[]string) []*run {
	if len(runs) <= maxRunFigures {
		return runs
	}
	*notes = append(*notes, fmt.Sprintf("%s: figures for the first %d of %d configurations; tables/ holds the data of all.", kind, maxRunFigures, len(runs)))
	return runs[:maxRunFigures]
}

// maskIoU draws, per selection run, the pairwise IoU of the clients' final masks for
// each tensor: FedSelect Fig. 4.
func (c *collected) maskIoU(notes *[]string) []Figure {
	var figs []Figure
	for _, x := range capRuns(c.firstSeed(func(x *run) bool { return len(x.iou) > 0 }), "Mask IoU", notes) {
		clients := 0
		var tensors []string
		idx := map[string]int{}
		for _, r := range x.iou {
			clients = max(clients, r.ClientA+1, r.ClientB+1)
			if _, ok := idx[r.Tensor]; !ok {
				idx[r.Tensor] = len(tensors)
				tensors = append(tensors, r.Tensor)
			}
		}
		labels := make([]string, clients)
		for i := range labels {
			labels[i] = fmt.Sprint(i)
		}
		panels := make([]chart.Panel, len(tensors))
		for t, tn := range tensors {
			m := make([][]float64, clients)
			for i := range m {
				m[i] = make([]float64, clients)
				for j := range m[i] {
					m[i][j] = math.NaN()
				}
			}
			panels[t] = chart.Panel{Title: tn, Labels: labels, Values: m}
		}
		for _, r := range x.iou {
			p := panels[idx[r.Tensor]].Values
			ca, cb := r.ClientA, r.ClientB
			p[ca][cb], p[cb][ca] = 100*r.IoU, 100*r.IoU
			if !math.IsNaN(r.IoU) { // NaN: both masks empty, IoU undefined (grey)
				p[ca][ca], p[cb][cb] = 100, 100
			}
		}
		shown := panels
		caption := "Pairwise IoU (%) of the clients' final personalization masks, per tensor; seed " + fmt.Sprint(x.r.Seed) + " (FedSelect Fig. 4). Grey: undefined (both masks empty)."
		if len(shown) > maxPanels {
			shown = shown[:maxPanels]
			caption += fmt.Sprintf(" The first %d of %d tensors are drawn; the table holds all.", maxPanels, len(panels))
		}
		if clients > maxMatrix {
			for i := range shown {
				p := shown[i]
				p.Labels, p.Values = p.Labels[:maxMatrix], p.Values[:maxMatrix]
				for r := range p.Values {
					p.Values[r] = p.Values[r][:maxMatrix]
				}
				shown[i] = p
			}
			caption += fmt.Sprintf(" Clients 0-%d of %d are drawn; the table holds all pairs.", maxMatrix-1, clients)
		}
		label := strings.TrimSpace(x.row + " " + x.col)
		title := "Mask IoU between clients: " + label
		figs = append(figs, Figure{Name: figName("mask-iou", x.row, x.col), Title: title, Caption: caption,
			Chart: chart.Heatmap{Scale: "IoU (%)", Min: 0, Max: 100, Panels: shown},
			Data:  summary.DataTable(x.iou, nil)})
	}
	return figs
}

// maxLayers bounds the lines of a personalized-fraction figure.
const maxLayers = 16

// selection draws, per selection run, the fraction of each tensor's entries that are
// personalized at each round, pooled over the clients trained that round: FedOBP Fig. 5.
func (c *collected) selection(notes *[]string) []Figure {
	var figs []Figure
	for _, x := range capRuns(c.firstSeed(func(x *run) bool { return len(x.sel) > 0 }), "Personalized fraction per layer", notes) {
		type acc struct{ pers, total int }
		per := map[string]map[int]*acc{}
		var tensors []string
		for _, s := range x.sel {
			if per[s.Tensor] == nil {
				per[s.Tensor] = map[int]*acc{}
				tensors = append(tensors, s.Tensor)
			}
			a := per[s.Tensor][s.Round]
			if a == nil {
				a = &acc{}
				per[s.Tensor][s.Round] = a
			}
			a.pers += s.Personalized
			a.total += s.Total
		}
		var series []chart.Series
		var data []layerFraction
		for _, tn := range tensors {
			s := chart.Series{Name: tn}
			for _, r := range sortedKeys(per[tn]) {
				a := per[tn][r]
				f := 100 * float64(a.pers) / float64(max(a.total, 1))
				s.X, s.Y = append(s.X, float64(r)), append(s.Y, f)
				data = append(data, layerFraction{Tensor: tn, Round: r, Percent: f})
			}
			series = append(series, s)
		}
		caption := "Personalized entries per tensor (%), pooled over the clients trained each round; seed " + fmt.Sprint(x.r.Seed) + " (FedOBP Fig. 5)."
		if len(series) > maxLayers {
			series = series[:maxLayers]
			caption += fmt.Sprintf(" The first %d tensors are drawn; the table holds all.", maxLayers)
		}
		label := strings.TrimSpace(x.row + " " + x.col)
		title := "Personalized fraction per layer: " + label
		figs = append(figs, Figure{Name: figName("selection", x.row, x.col), Title: title, Caption: caption,
			Chart: chart.Line{XLabel: "round", YLabel: "personalized entries (%)", Series: series, Width: 6.5, Height: 3.8},
			Data:  summary.DataTable(data, nil)})
	}
	return figs
}

// scoreQuantile draws accuracy against the quantile q, one line per importance score
// (FedOBP Fig. 4), for the runs of a method that selects by a score at a quantile (it
// registers a word parameter score and a parameter q: FedOBP), when the manifest has such
// runs at two or more q.
func (c *collected) scoreQuantile(metric string) []Figure {
	var figs []Figure
	for _, col := range c.cols {
		type key struct {
			score string
			q     float64
		}
		vals := map[key][]float64{}
		var scores []string
		qs := map[float64]bool{}
		for _, x := range c.runs {
			sq := scoreQuantile(x.r.Method)
			if x.col != col || !sq.Declared() || x.summary == nil {
				continue
			}
			k := key{x.r.Options[sq.Score], x.r.Params[sq.Q]}
			if _, ok := vals[k]; !ok && !contains(scores, k.score) {
				scores = append(scores, k.score)
			}
			vals[k] = append(vals[k], value(*x.summary, metric))
			qs[k.q] = true
		}
		if len(qs) < 2 {
			continue
		}
		logX := true
		for q := range qs {
			if q >= 1 {
				logX = false
			}
		}
		var series []chart.Series
		var data []scoreAccuracy
		for _, sc := range scores {
			s := chart.Series{Name: sc}
			for _, q := range sortedKeys(qs) {
				v, ok := vals[key{sc, q}]
				if !ok {
					continue
				}
				x := q
				if logX {
					x = 1 - q
				}
				s.X, s.Y = append(s.X, x), append(s.Y, summary.Mean(v))
				data = append(data, scoreAccuracy{Score: sc, Q: q, Accuracy: summary.Mean(v)})
			}
			series = append(series, s)
		}
		xl, axisNote := "quantile q", ""
		var tick func(float64) string
		if logX {
			xl, axisNote = "quantile q (axis: 1 − q, log scale)", " The x axis is 1 − q, the fraction of entries kept personal, on a log scale, its ticks labelled with q."
			tick = func(x float64) string { return strconv.FormatFloat(1-x, 'g', 6, 64) }
		}
		title := titleIn("FedOBP: importance score vs quantile", col)
		figs = append(figs, Figure{Name: figName("score-quantile", col), Title: title,
			Caption: "FedOBP's accuracy (" + metricLabel(metric) + ", averaged over seeds) for each importance score across quantiles q (FedOBP Fig. 4)." + axisNote,
			Chart:   chart.Line{XLabel: xl, YLabel: "accuracy (%)", Series: series, LogX: logX, XTick: tick},
			Data:    summary.DataTable(data, nil)})
	}
	return figs
}

// shiftPoint is one (configuration, shift, level) accuracy averaged over seeds.
type shiftPoint struct {
	row, col, shift string
	level           float64
	mean, std       []float64
}

// shiftPoints gathers the shift summaries of every run, folding seeds.
func (c *collected) shiftPoints() []*shiftPoint {
	var out []*shiftPoint
	at := map[string]*shiftPoint{}
	for _, x := range c.runs {
		if !x.entry.Shifted {
			continue
		}
		for _, r := range x.entry.Shift {
			k := fmt.Sprintf("%s\x00%s\x00%s\x00%v", x.row, x.col, r.Shift, r.Level)
			p := at[k]
			if p == nil {
				p = &shiftPoint{row: x.row, col: x.col, shift: r.Shift, level: r.Level}
				at[k] = p
				out = append(out, p)
			}
			p.mean = append(p.mean, 100*r.Mean)
			p.std = append(p.std, 100*r.Std)
		}
	}
	return out
}

// shifts draws accuracy against the shift degree (DM-PFL Table 1 as a plot) and, per
// corruption, against its severity (DM-PFL Fig. 4), one line per method.
func (c *collected) shifts() []Figure {
	pts := c.shiftPoints()
	var kinds []string
	for _, p := range pts {
		if !contains(kinds, p.shift) {
			kinds = append(kinds, p.shift)
		}
	}
	var figs []Figure
	for _, col := range c.cols {
		for _, kind := range kinds {
			var series []chart.Series
			var data []shiftAccuracy
			for _, row := range c.rows {
				s := chart.Series{Name: c.display(row)}
				for _, p := range pts {
					if p.row == row && p.col == col && p.shift == kind {
						s.X, s.Y = append(s.X, p.level), append(s.Y, summary.Mean(p.mean))
						data = append(data, shiftAccuracy{Method: row, Display: c.display(row), Level: p.level, Mean: summary.Mean(p.mean), Std: summary.Mean(p.std)})
					}
				}
				if len(s.X) > 0 {
					series = append(series, s)
				}
			}
			if len(series) == 0 {
				continue
			}
			title, xl, caption := "Accuracy under corruption: "+kind, "severity", "Accuracy under the "+kind+" corruption by severity, mean over clients, averaged over seeds (DM-PFL Fig. 4)."
			if name, ok := strings.CutPrefix(kind, "cifar10c:"); ok {
				title, caption = "Accuracy under CIFAR-10-C: "+name, "Accuracy under the real CIFAR-10-C "+name+" files by severity (test samples replaced by their own CIFAR-10-C version, or a same-class one), mean over clients, averaged over seeds."
			}
			if kind == "degree" {
				title, xl, caption = "Accuracy vs shift degree", "shift degree d (fraction of test data from other clients)", "Accuracy when a fraction d of each client's test set is replaced by pooled test data, mean over clients, averaged over seeds (DM-PFL Table 1)."
			}
			title = titleIn(title, col)
			figs = append(figs, Figure{Name: figName("shift-"+fileName(kind), col), Title: title, Caption: caption,
				Chart: chart.Line{XLabel: xl, YLabel: "accuracy, mean over clients (%)", Series: series},
				Data:  summary.DataTable(data, nil)})
		}
	}
	return figs
}

func sortedKeys[K int | float64, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// scoreQuantile is the importance score and quantile parameters the registered method
// declares (manifest.MethodDef.ScoreQuantile; zero for a method that selects entries by
// none).
func scoreQuantile(method string) manifest.ScoreQuantile {
	d, _ := manifest.LookupMethod(method)
	return d.ScoreQuantile
}
