package chart

import (
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Palette is the Okabe–Ito colour-blind-safe palette in the order series use it, with
// its yellow (too light for a line on white) replaced by a mid grey.
var Palette = []color.Color{
	rgb(0x0072B2), rgb(0xE69F00), rgb(0x009E73), rgb(0xD55E00),
	rgb(0xCC79A7), rgb(0x56B4E9), rgb(0x000000), rgb(0x999999),
}

func rgb(v uint32) color.RGBA {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

// glyphs are drawn in turn with the palette so that series differ by shape as well; past
// len(Palette) series the lines are dashed (dashes).
var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}}

var dashes = [][]vg.Length{nil, {vg.Points(5), vg.Points(2.5)}, {vg.Points(1.5), vg.Points(2)}}

// maxMarked is the longest series drawn with a marker at each point.
const maxMarked = 60

// Series is one line of a chart.
type Series struct {
	Name string
	X, Y []float64
	// Lo and Hi, when set (one per x), bound a shaded band around the line (e.g. mean ± std
	// over seeds); NaN leaves a point out of the band.
	Lo, Hi []float64
}

// Line is a chart of one or more series against a shared x axis.
type Line struct {
	Title, XLabel, YLabel string
	Series                []Series
	// Width and Height of the plot in inches (the legend, when below, adds to the
	// height); 0 means 5.5 × 3.5.
	Width, Height float64
	// LogX draws the x axis on a log10 scale (e.g. quantiles near 1 as 1−q), ticked at the
	// data's own x values; all x must be > 0.
	LogX bool
	// XTick, when set, labels the tick at data value x (e.g. q for an axis of 1−q).
	XTick func(x float64) string
	// YLo and YHi fix the y range (so that the figures of one report share it); both
	// zero: the data's range.
	YLo, YHi float64
	// XLo and XHi, when XLo < XHi, widen the x range to hold [XLo, XHi] (e.g. a run's rounds
	// from the first to the last, where only a few were evaluated).
	XLo, XHi float64
	// order, when set (Panels), gives each series its style by its name's index in it, so
	// that a series looks the same in every panel of a figure.
	order []string
}

// legendBelowAt is the longest series name that still puts the legend beside the plot.
const legendBelowAt = 22

func (c Line) legendBelow() bool {
	for _, s := range c.Series {
		if len([]rune(s.Name)) > legendBelowAt {
			return true
		}
	}
	return false
}

// legendLayout returns the legend's entry width, its columns and rows for a figure w wide.
func (c Line) legendLayout(w vg.Length) (entryW vg.Length, cols, rows int) {
	sty := textStyle(legendSize)
	for _, s := range c.Series {
		entryW = max(entryW, sty.Width(s.Name))
	}
	entryW += vg.Points(20 + 6 + 14) // thumbnail, gap, space to the next column
	if !c.legendBelow() {
		return entryW, 1, len(c.Series)
	}
	cols = max(1, int((w-vg.Points(24))/entryW))
	return entryW, cols, (len(c.Series) + cols - 1) / cols
}

// entryHeight is the height of one legend line.
func entryHeight() vg.Length { return textStyle(legendSize).Height("Tg") + vg.Points(3) }

func (c Line) size() (w, h vg.Length) {
	wi, hi := c.Width, c.Height
	if wi == 0 || hi == 0 {
		wi, hi = 5.5, 3.5
	}
	w, h = vg.Length(wi)*vg.Inch, vg.Length(hi)*vg.Inch
	if c.legendBelow() {
		_, _, rows := c.legendLayout(w)
		h += vg.Length(rows)*entryHeight() + vg.Points(8)
	}
	return w, h
}

// Render draws the chart as a document of format ("svg", "png" or "pdf"). Points with a
// NaN y are gaps in their line.
func (c Line) Render(format string) ([]byte, error) {
	w, h := c.size()
	return render(format, w, h, c.draw)
}

// style returns the colour, glyph and dashes of series i.
func style(i int) (color.Color, draw.GlyphDrawer, []vg.Length) {
	return Palette[i%len(Palette)], glyphs[i%len(glyphs)], dashes[(i/len(Palette))%len(dashes)]
}

// segments splits a series into its runs of points with a y.
func segments(s Series) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for j := range s.X {
		if j >= len(s.Y) || math.IsNaN(s.Y[j]) || math.IsNaN(s.X[j]) {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, plotter.XY{X: s.X[j], Y: s.Y[j]})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// band returns the polygon of a series' Lo–Hi band (over the points that have both), or
// nil.
func band(s Series) plotter.XYs {
	if len(s.Lo) != len(s.X) || len(s.Hi) != len(s.X) {
		return nil
	}
	var up, down plotter.XYs
	for j, x := range s.X {
		if !math.IsNaN(s.Lo[j]) && !math.IsNaN(s.Hi[j]) {
			up = append(up, plotter.XY{X: x, Y: s.Hi[j]})
			down = append(down, plotter.XY{X: x, Y: s.Lo[j]})
		}
	}
	if len(up) < 2 {
		return nil
	}
	slices.Reverse(down)
	return append(up, down...)
}

// integralX reports whether every x is a whole number (rounds, severities).
func (c Line) integralX() bool {
	for _, s := range c.Series {
		for _, x := range s.X {
			if x != math.Trunc(x) {
				return false
			}
		}
	}
	return !c.LogX
}

// build lays the series out on a plot and returns it with the legend's entries.
func (c Line) build(txt func(string) string) (*plot.Plot, []legendEntry, error) {
	p := newPlot(c.XLabel, c.YLabel, txt)
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	grid.Horizontal.Color = color.Gray{Y: 0xdd}
	p.Add(grid)
	var entries []legendEntry
	for i, s := range c.Series {
		if k := slices.Index(c.order, s.Name); k >= 0 {
			i = k
		}
		col, glyph, dash := style(i)
		if poly := band(s); poly != nil {
			b, err := plotter.NewPolygon(poly)
			if err != nil {
				return nil, nil, err
			}
			r, g, bl, _ := col.RGBA()
			b.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(bl >> 8), A: 0x30}
			b.LineStyle.Width = 0
			p.Add(b)
		}
		line := &plotter.Line{LineStyle: draw.LineStyle{Color: col, Width: vg.Points(1.5), Dashes: dash}}
		marks := &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Color: col, Radius: vg.Points(2.5), Shape: glyph}}
		for _, seg := range segments(s) {
			l, err := plotter.NewLine(seg)
			if err != nil {
				return nil, nil, err
			}
			l.LineStyle = line.LineStyle
			p.Add(l)
			if len(s.X) <= maxMarked {
				m, err := plotter.NewScatter(seg)
				if err != nil {
					return nil, nil, err
				}
				m.GlyphStyle = marks.GlyphStyle
				p.Add(m)
			}
		}
		e := legendEntry{name: txt(s.Name), thumbs: []plot.Thumbnailer{line}}
		if len(s.X) <= maxMarked {
			e.thumbs = append(e.thumbs, marks)
		}
		entries = append(entries, e)
	}
	if c.YLo < c.YHi {
		p.Y.Min, p.Y.Max = c.YLo, c.YHi
	}
	if c.XLo < c.XHi && !c.LogX {
		p.X.Min, p.X.Max = math.Min(p.X.Min, c.XLo), math.Max(p.X.Max, c.XHi)
	}
	if !(p.X.Min <= p.X.Max) || !(p.Y.Min <= p.Y.Max) { // nothing to draw: empty axes
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	}
	if ts := Ticks(p.Y.Min, p.Y.Max, 6); len(ts) > 1 { // extend the y range to whole ticks
		step := ts[1] - ts[0]
		p.Y.Min, p.Y.Max = math.Floor(p.Y.Min/step+1e-9)*step, math.Ceil(p.Y.Max/step-1e-9)*step
	}
	switch {
	case c.LogX:
		p.X.Scale = plot.LogScale{}
		var ticks []plot.Tick
		for _, s := range c.Series {
			for _, x := range s.X {
				if !slices.ContainsFunc(ticks, func(t plot.Tick) bool { return t.Value == x }) {
					ticks = append(ticks, plot.Tick{Value: x, Label: txt(c.tickLabel(x))})
				}
			}
		}
		slices.SortFunc(ticks, func(a, b plot.Tick) int { return cmpFloat(a.Value, b.Value) })
		p.X.Tick.Marker = plot.ConstantTicks(thinTicks(ticks))
	default:
		p.X.Tick.Marker = roundTicks{n: 7, integral: c.integralX()}
	}
	p.Y.Tick.Marker = roundTicks{n: 6}
	if c.XTick != nil && !c.LogX {
		base := p.X.Tick.Marker
		p.X.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
			ts := base.Ticks(lo, hi)
			for i := range ts {
				if ts[i].Label != "" {
					ts[i].Label = txt(c.XTick(ts[i].Value))
				}
			}
			return ts
		})
	}
	return p, entries, nil
}

func (c Line) tickLabel(x float64) string {
	if c.XTick != nil {
		return c.XTick(x)
	}
	return num(x)
}

// num formats a tick value without trailing noise.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// thinTicks blanks the labels of log-axis ticks that would crowd their left neighbour
// (their tick mark stays): at most one label per tenth of a decade.
func thinTicks(ts []plot.Tick) []plot.Tick {
	last := math.Inf(-1)
	for i := range ts {
		if v := math.Log10(ts[i].Value); v-last >= 0.1 {
			last = v
		} else {
			ts[i].Label = ""
		}
	}
	return ts
}

// roundTicks labels about n round values (steps of 1, 2 or 5 × 10^k) of an axis; whole
// ones only when integral (an axis of rounds has no round 1.5).
type roundTicks struct {
	n        int
	integral bool
}

func (t roundTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, v := range Ticks(lo, hi, t.n) {
		if !t.integral || v == math.Trunc(v) {
			out = append(out, plot.Tick{Value: v, Label: num(v)})
		}
	}
	if t.integral && len(out) < 2 { // a short range: every whole number in it
		out = nil
		for v := math.Ceil(lo); v <= hi; v++ {
			out = append(out, plot.Tick{Value: v, Label: num(v)})
		}
	}
	return out
}

// Ticks returns about n round tick values covering [lo, hi] (steps of 1, 2 or 5 × 10^k).
func Ticks(lo, hi float64, n int) []float64 {
	if !(hi > lo) || n < 2 {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n-1)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	m := 10.0
	for _, c := range []float64{1, 2, 5, 10} {
		if c*mag >= raw {
			m = c
			break
		}
	}
	step := m * mag
	// k·step computed as k·m/10^e (or k·m·10^e) so that 0.6 is 0.6, not 0.6000000000000001.
	at := func(k float64) float64 {
		if mag < 1 {
			return k * m / math.Round(1/mag)
		}
		return k * m * mag
	}
	var out []float64
	for k := math.Ceil(lo/step - 1e-9); at(k) <= hi+step*1e-9; k++ {
		if v := at(k); v == 0 {
			out = append(out, 0) // not -0
		} else {
			out = append(out, v)
		}
	}
	return out
}

// legendEntry is one line of a legend: a series name and the thumbnails drawn beside it.
type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// draw draws the chart on dc: the title, the plot and the legend beside it (short names)
// or below it in as many columns as fit.
func (c Line) draw(dc draw.Canvas, txt func(string) string) {
	p, entries, err := c.build(txt)
	if err != nil {
		panic(err) // reported by render
	}
	dc = drawTitle(dc, c.Title, txt)
	w := dc.Max.X - dc.Min.X
	entryW, cols, rows := c.legendLayout(w)
	if len(entries) == 0 {
		p.Draw(dc)
		return
	}
	if c.legendBelow() {
		legendH := vg.Length(rows)*entryHeight() + vg.Points(8)
		p.Draw(draw.Crop(dc, 0, 0, legendH, 0))
		drawLegend(draw.Crop(dc, 0, 0, 0, -(dc.Max.Y-dc.Min.Y-legendH)), entries, entryW, cols)
		return
	}
	p.Draw(draw.Crop(dc, 0, -entryW, 0, 0))
	drawLegend(draw.Crop(dc, w-entryW+vg.Points(8)-vg.Points(24), 0, 0, -vg.Points(6)), entries, entryW, 1)
}

// drawLegend draws entries in cols columns entryW apart, from 24 points into dc's top left,
// entry i in column i % cols.
func drawLegend(dc draw.Canvas, entries []legendEntry, entryW vg.Length, cols int) {
	legends := make([]plot.Legend, cols)
	for k := range legends {
		l := plot.NewLegend()
		l.TextStyle = textStyle(legendSize)
		l.Top, l.Left = true, true
		l.Padding = vg.Points(3)
		l.ThumbnailWidth = vg.Points(20)
		legends[k] = l
	}
	for i, e := range entries {
		legends[i%cols].Add(e.name, e.thumbs...)
	}
	for k := range legends {
		left := vg.Points(24) + vg.Length(k)*entryW
		legends[k].Draw(draw.Crop(dc, left, 0, 0, 0))
	}
}
