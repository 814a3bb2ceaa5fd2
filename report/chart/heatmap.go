package chart

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// viridis stops (matplotlib's viridis at 0, 0.25, 0.5, 0.75, 1); the colour map
// interpolates them at even steps of luminance.
var viridis = []color.Color{rgb(0x440154), rgb(0x3b528b), rgb(0x21918c), rgb(0x5ec962), rgb(0xfde725)}

// nanColor fills the cells with no value (e.g. the IoU of two empty masks).
var nanColor = color.Gray{Y: 0xbd}

// Panel is one square matrix of a heatmap figure, e.g. one layer's pairwise mask IoU.
type Panel struct {
	Title string
	// Labels name the rows and columns.
	Labels []string
	// Values[i][j]; NaN draws an empty (grey) cell.
	Values [][]float64
}

// Heatmap is a grid of panels sharing one colour scale from Min to Max, drawn with row
// 0 at the top like a matrix.
type Heatmap struct {
	Title string
	// Scale labels the colour bar.
	Scale    string
	Min, Max float64
	Panels   []Panel
	// Columns is the number of panels per row (0: up to 4).
	Columns int
}

// Sizes of a heatmap figure's parts.
var (
	panelSide = 2.1 * vg.Inch
	barWidth  = 0.95 * vg.Inch
	// rowGap keeps a panel's title clear of the tick labels of the panel above.
	rowGap = vg.Points(14)
)

func (h Heatmap) grid() (cols, rows int) {
	cols = h.Columns
	if cols <= 0 {
		cols = min(4, max(1, len(h.Panels)))
	}
	return cols, max(1, (len(h.Panels)+cols-1)/cols)
}

func (h Heatmap) size() (w, ht vg.Length) {
	cols, rows := h.grid()
	return vg.Length(cols)*panelSide + barWidth, titleHeight() + vg.Length(rows)*panelSide + vg.Length(rows-1)*rowGap
}

// Render draws the panels as a document of format ("svg", "png" or "pdf").
func (h Heatmap) Render(format string) ([]byte, error) {
	w, ht := h.size()
	return render(format, w, ht, h.draw)
}

// colorMap is the viridis map from h.Min to h.Max.
func (h Heatmap) colorMap() palette.ColorMap {
	cm, err := moreland.NewLuminance(viridis)
	if err != nil {
		panic(fmt.Sprintf("viridis: %v", err)) // fixed stops of rising luminance
	}
	lo, hi := h.Min, h.Max
	if !(hi > lo) {
		hi = lo + 1
	}
	cm.SetMin(lo)
	cm.SetMax(hi)
	return cm
}

// matrix is a panel's values as a plotter.GridXYZ: column c is x = c, row r is y = r.
type matrix [][]float64

func (m matrix) Dims() (c, r int) {
	if len(m) == 0 {
		return 0, 0
	}
	return len(m[0]), len(m)
}
func (m matrix) Z(c, r int) float64 { return m[r][c] }
func (m matrix) X(c int) float64    { return float64(c) }
func (m matrix) Y(r int) float64    { return float64(r) }

// clientTicks labels every k-th of n rows or columns, k chosen so that labels never
// overlap.
func clientTicks(labels []string, n int, txt func(string) string) plot.ConstantTicks {
	k := max(1, int(math.Ceil(float64(n)*tickSize*1.6/(panelSide.Points()-40))))
	var ts plot.ConstantTicks
	for i := 0; i < n; i++ {
		t := plot.Tick{Value: float64(i)}
		if i%k == 0 {
			t.Label = fmt.Sprint(i)
			if i < len(labels) {
				t.Label = txt(labels[i])
			}
		}
		ts = append(ts, t)
	}
	return ts
}

// panelPlot draws one panel with the shared palette.
func (h Heatmap) panelPlot(pan Panel, cm palette.ColorMap, txt func(string) string) *plot.Plot {
	p := newPlot("", "", txt)
	p.Title.Text = txt(clip(pan.Title, 26))
	p.Title.TextStyle = textStyle(labelSize)
	p.X.Padding, p.Y.Padding = 0, 0
	n := len(pan.Values)
	if n == 0 || len(pan.Values[0]) == 0 {
		p.HideAxes()
		return p
	}
	hm := plotter.NewHeatMap(matrix(pan.Values), cm.Palette(256))
	hm.Min, hm.Max = cm.Min(), cm.Max()
	hm.NaN, hm.Underflow, hm.Overflow = nanColor, hm.Palette.Colors()[0], hm.Palette.Colors()[255]
	p.Add(hm)
	p.Y.Scale = plot.InvertedScale{Normalizer: plot.LinearScale{}}
	p.X.Tick.Marker = clientTicks(pan.Labels, len(pan.Values[0]), txt)
	p.Y.Tick.Marker = clientTicks(pan.Labels, n, txt)
	p.X.Tick.Length, p.Y.Tick.Length = vg.Points(3), vg.Points(3)
	return p
}

// draw draws the title, the panels on a grid and the colour bar to their right.
func (h Heatmap) draw(dc draw.Canvas, txt func(string) string) {
	dc = drawTitle(dc, h.Title, txt)
	cm := h.colorMap()
	cols, rows := h.grid()
	w := dc.Max.X - dc.Min.X
	panels := draw.Crop(dc, 0, -barWidth, 0, 0)
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	for i, pan := range h.Panels {
		plots[i/cols][i%cols] = h.panelPlot(pan, cm, txt)
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(10), PadY: rowGap,
		PadLeft: vg.Points(4), PadBottom: vg.Points(4)}
	for r := range plots {
		for c, p := range plots[r] {
			if p != nil {
				p.Draw(tiles.At(panels, c, r))
			}
		}
	}
	// The colour bar, as tall as one row of panels.
	bar := newPlot("", h.Scale, txt)
	bar.Add(colorBar{cm})
	bar.HideX()
	bar.Y.Padding = 0
	tile := tiles.At(panels, 0, 0)
	top := dc.Max.Y - tile.Max.Y + titleHeight() // level with the panels' plot areas
	side := draw.Crop(dc, w-barWidth+vg.Points(12), -vg.Points(26), tile.Min.Y-dc.Min.Y+vg.Points(20), -top)
	bar.Draw(side)
}

// colorBar draws a vertical colour bar as strips of filled rectangles. (plotter.ColorBar
// draws an image, which vgpdf turns upside down.)
type colorBar struct{ cm palette.ColorMap }

// barStrips is the number of strips of a colour bar.
const barStrips = 64

// Plot implements plot.Plotter.
func (b colorBar) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	lo, hi := b.cm.Min(), b.cm.Max()
	for i := 0; i < barStrips; i++ {
		y0, y1 := lo+(hi-lo)*float64(i)/barStrips, lo+(hi-lo)*float64(i+1)/barStrips
		col, err := b.cm.At((y0 + y1) / 2)
		if err != nil {
			continue
		}
		// A hair taller than the strip, so that no seam shows between strips.
		r := vg.Rectangle{Min: vg.Point{X: trX(0), Y: trY(y0) - 0.2}, Max: vg.Point{X: trX(1), Y: trY(y1) + 0.2}}
		c.SetColor(col)
		c.Fill(r.Path())
	}
}

// DataRange implements plot.DataRanger: x from 0 to 1, y the map's range.
func (b colorBar) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0, 1, b.cm.Min(), b.cm.Max()
}
