package chart

import (
	"slices"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Panels is one figure made of several line charts, its subplots (a grid cell each), laid
// out in rows of Cols, with one legend below them all. A series has the same colour and
// mark in every panel, chosen by its name, so a method reads the same across cells. Each
// Line's Title labels its panel (the cell); the figure itself has no title: its caption
// carries it.
type Panels struct {
	Lines []Line
	// Cols is the panels per row; 0 means up to 3 (2 for four panels).
	Cols int
}

// Panel size in inches.
const panelW, panelH = 3.6, 2.9

// names lists the series' names in order of first appearance over the panels.
func (c Panels) names() []string {
	var out []string
	for _, l := range c.Lines {
		for _, s := range l.Series {
			if !slices.Contains(out, s.Name) {
				out = append(out, s.Name)
			}
		}
	}
	return out
}

func (c Panels) grid() (cols, rows int) {
	cols = c.Cols
	switch {
	case cols > 0:
	case len(c.Lines) == 4:
		cols = 2 // 2 × 2 rather than 3 + 1
	default:
		cols = min(3, len(c.Lines))
	}
	cols = max(1, cols)
	return cols, (len(c.Lines) + cols - 1) / cols
}

// legend returns the shared legend's entry width, columns and rows for a figure w wide.
func (c Panels) legend(w vg.Length) (entryW vg.Length, cols, rows int) {
	sty := textStyle(legendSize)
	names := c.names()
	for _, n := range names {
		entryW = max(entryW, sty.Width(n))
	}
	entryW += vg.Points(20 + 6 + 14)
	cols = max(1, min(len(names), int((w-vg.Points(24))/entryW)))
	return entryW, cols, (len(names) + cols - 1) / cols
}

func (c Panels) size() (w, h vg.Length) {
	cols, rows := c.grid()
	w, h = vg.Length(float64(cols)*panelW)*vg.Inch, vg.Length(float64(rows)*panelH)*vg.Inch
	_, _, lr := c.legend(w)
	return w, h + vg.Length(lr)*entryHeight() + vg.Points(8)
}

// Render draws the panels as a document of format ("svg", "png" or "pdf").
func (c Panels) Render(format string) ([]byte, error) {
	w, h := c.size()
	return render(format, w, h, c.draw)
}

func (c Panels) draw(dc draw.Canvas, txt func(string) string) {
	names := c.names()
	cols, rows := c.grid()
	w := dc.Max.X - dc.Min.X
	entryW, lcols, lrows := c.legend(w)
	legendH := vg.Length(lrows)*entryHeight() + vg.Points(8)
	top := draw.Crop(dc, 0, 0, legendH, 0)
	pw, ph := (top.Max.X-top.Min.X)/vg.Length(cols), (top.Max.Y-top.Min.Y)/vg.Length(rows)
	entries := make([]legendEntry, len(names))
	for i, l := range c.Lines {
		l.order = names
		p, es, err := l.build(txt)
		if err != nil {
			panic(err) // reported by render
		}
		for j, s := range l.Series {
			if k := slices.Index(names, s.Name); entries[k].thumbs == nil {
				entries[k] = es[j]
			}
		}
		r, k := i/cols, i%cols
		cell := draw.Canvas{Canvas: top.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: top.Min.X + vg.Length(k)*pw, Y: top.Max.Y - vg.Length(r+1)*ph},
			Max: vg.Point{X: top.Min.X + vg.Length(k+1)*pw, Y: top.Max.Y - vg.Length(r)*ph}}}
		if l.Title != "" { // the panel's label (its grid cell), centred above it
			sty := textStyle(labelSize)
			sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
			cell.FillText(sty, vg.Point{X: (cell.Min.X + cell.Max.X) / 2, Y: cell.Max.Y - vg.Points(4)}, txt(l.Title))
			cell = draw.Crop(cell, 0, 0, 0, -(sty.Height("Tg") + vg.Points(8)))
		}
		p.Draw(draw.Crop(cell, vg.Points(2), -vg.Points(8), vg.Points(4), 0))
	}
	drawLegend(draw.Crop(dc, 0, 0, 0, -(dc.Max.Y-dc.Min.Y-legendH)), entries, entryW, lcols)
}

// compile-time check: Panels is a Chart.
var _ Chart = Panels{}
