// Package chart draws the report's figures with gonum/plot: line charts of one or more
// series (with optional bands of ± the std over seeds) and rows of heatmap panels
// sharing a colour bar. A chart is a description of what to draw; Render draws it as an
// SVG, PNG or PDF document, the same bytes for the same chart.
//
// The figures are meant to be pasted into a paper: serif text (Liberation Serif, metric
// compatible with Times) sized for a figure about 5 inches wide, axis labels, a legend
// beside or below the plot, Okabe–Ito colours for series (which also differ by marker and,
// past eight, by dash) and viridis for heatmaps, so that they survive grey-scale printing
// and the common colour-vision deficiencies.
package chart

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"sync"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"golang.org/x/text/encoding/charmap"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Formats are the file formats Render writes, in the order the report lists them.
var Formats = []string{"svg", "png", "pdf"}

// PNGScale is the PNG's size relative to the SVG's at 96 pixels per inch (the browser's
// CSS pixel): 2 gives a bitmap sharp enough for slides.
const PNGScale = 2

// pngDPI is the PNG's resolution: PNGScale CSS pixels per pixel.
const pngDPI = 96 * PNGScale

// Chart is a figure that can be drawn: a Line or a Heatmap.
type Chart interface {
	// Render draws the chart as a document of format ("svg", "png" or "pdf").
	Render(format string) ([]byte, error)
}

// pdfEpoch is the creation and modification date written into every PDF, in place of the
// time it was drawn, so that the same chart gives the same bytes.
var pdfEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

var pdfDefaults sync.Once

// render draws a chart of size w × h with draw into a document of format. text (the
// chart's strings) goes through txt, which for PDF maps it to the code page vgpdf's fonts
// are encoded in.
func render(format string, w, h vg.Length, paint func(dc draw.Canvas, txt func(string) string)) (b []byte, err error) {
	// gonum/plot reports some drawing errors by panicking (an empty palette, a bad range).
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("chart: drawing %s: %v", format, r)
		}
	}()
	var c interface {
		vg.CanvasSizer
		io.WriterTo
	}
	txt := func(s string) string { return s }
	switch format {
	case "svg":
		c = vgsvg.New(w, h)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))}
	case "pdf":
		// fpdf stamps a PDF with the time it is written unless its package-wide defaults say
		// otherwise, and vgpdf gives no access to its document, so the defaults are set: a
		// fixed date and resource catalogs (fonts) written in sorted order rather than in
		// map order. The report is fpdf's only user in fedpipe.
		pdfDefaults.Do(func() {
			fpdf.SetDefaultCreationDate(pdfEpoch)
			fpdf.SetDefaultModificationDate(pdfEpoch)
			fpdf.SetDefaultCatalogSort(true)
		})
		c = straightAlpha{vgpdf.New(w, h)}
		txt = pdfText
	default:
		return nil, fmt.Errorf("chart: unknown format %q (want svg, png or pdf)", format)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	paint(dc, txt)
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart: writing %s: %w", format, err)
	}
	return buf.Bytes(), nil
}

// straightAlpha hands vgpdf colours with straight (not premultiplied) channels: vgpdf
// takes color.Color's premultiplied RGBA as straight, so a translucent fill (a band)
// comes out dark grey.
type straightAlpha struct{ *vgpdf.Canvas }

// SetColor implements vg.Canvas.
func (c straightAlpha) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black
	}
	n := color.NRGBA64Model.Convert(clr).(color.NRGBA64)
	c.Canvas.SetColor(straight(n))
}

// straight is a colour whose RGBA method returns its straight channels, for vgpdf only.
type straight color.NRGBA64

func (s straight) RGBA() (r, g, b, a uint32) {
	return uint32(s.R), uint32(s.G), uint32(s.B), uint32(s.A)
}

// pdfASCII spells out the characters the report's labels use that Windows-1252 (vgpdf's
// font encoding) lacks.
var pdfASCII = map[rune]string{'−': "-", 'α': "alpha", 'β': "beta", '≥': ">=", '≤': "<="}

// pdfText encodes s in Windows-1252, the code page vgpdf embeds its fonts with: fpdf writes
// a string's bytes as they are, so UTF-8 would show as mojibake. A character the code page
// lacks is spelled out (pdfASCII) or becomes "?".
func pdfText(s string) string {
	var b bytes.Buffer
	enc := charmap.Windows1252
	for _, r := range s {
		if a, ok := pdfASCII[r]; ok {
			b.WriteString(a)
		} else if c, ok := enc.EncodeRune(r); ok {
			b.WriteByte(c)
		} else {
			b.WriteByte('?')
		}
	}
	return b.String()
}

// Text sizes in points, for a figure about 5 inches wide.
const (
	titleSize  = 11
	labelSize  = 10
	tickSize   = 9
	legendSize = 9
)

// textStyle is the style of the figure's text at size points. It is never bold: vgpdf
// registers a bold face under its plain style and then cannot find it ("undefined font").
func textStyle(size vg.Length) text.Style {
	return text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, size), Handler: plot.DefaultTextHandler}
}

// newPlot returns a plot with the report's text sizes, no title (the figure draws its own
// title above everything) and light horizontal grid lines.
func newPlot(xLabel, yLabel string, txt func(string) string) *plot.Plot {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = txt(xLabel), txt(yLabel)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = labelSize
		a.Tick.Label.Font.Size = tickSize
		a.Label.Padding = vg.Points(4)
	}
	return p
}

// drawTitle writes title centred at the top of dc and returns dc less the title's band.
func drawTitle(dc draw.Canvas, title string, txt func(string) string) draw.Canvas {
	if title == "" {
		return dc
	}
	sty := textStyle(titleSize)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	dc.FillText(sty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - vg.Points(6)}, txt(title))
	return draw.Crop(dc, 0, 0, 0, -titleHeight())
}

// titleHeight is the band drawTitle takes: the title and the space below it, which a
// plot's own title (a heatmap panel's) reaches into.
func titleHeight() vg.Length {
	return textStyle(titleSize).Height("Tg") + vg.Points(20)
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if n < 2 || len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
