// Package plot draws the report's figures as standalone SVG documents: line charts with
// axes, ticks and a legend, and panels of heatmaps with a colour bar. Colours come from
// palettes that stay distinguishable under the common colour-vision deficiencies
// (Okabe–Ito for series, viridis for heatmaps), and series also differ by marker shape,
// so a figure survives grey-scale printing. The output is plain SVG 1.1 with no scripts
// or external references, readable when pasted into a paper or an HTML page. The same
// SVG, rasterized (PNG), gives a bitmap of the figure for slides.
package plot

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Palette is the Okabe–Ito colour-blind-safe palette in the order series use it, with
// its yellow (too light for a line on white) replaced by a mid grey.
var Palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#999999"}

// markers are drawn in turn with the palette so that series differ by shape as well.
var markers = []string{"circle", "square", "triangle", "diamond"}

const font = `font-family="Helvetica, Arial, sans-serif"`

// esc escapes text for an SVG text node or attribute.
func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace(s)
}

// num formats a coordinate compactly.
func num(v float64) string { return fmt.Sprintf("%.1f", v) }

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
		out = append(out, at(k))
	}
	return out
}

// tickLabel formats a tick value without trailing noise.
func tickLabel(v float64) string {
	if v == 0 {
		return "0" // not "-0"
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	s := fmt.Sprintf("%.4g", v)
	return s
}

// Series is one line of a chart.
type Series struct {
	Name string
	X, Y []float64
	// Lo and Hi, when set (one per x), bound a shaded band around the line (e.g. mean ± std
	// over seeds); NaN leaves a point out of the band.
	Lo, Hi []float64
}

// LineChart is a chart of one or more series against a shared x axis.
type LineChart struct {
	Title, XLabel, YLabel string
	Series                []Series
	// Width and Height of the SVG in pixels; 0 means 640 × 400.
	Width, Height int
	// LogX draws the x axis on a log10 scale (e.g. quantiles near 1 as 1−q); all x must be > 0.
	LogX bool
	// XTick, when set, labels the tick at data value x (e.g. q for an axis of 1−q).
	XTick func(x float64) string
	// YLo and YHi fix the y range (so that the panels of one figure share it); both zero:
	// the data's range.
	YLo, YHi float64
}

// bounds returns the data range of the chart, padded so that lines do not touch the frame.
func (c LineChart) bounds() (x0, x1, y0, y1 float64) {
	x0, y0 = math.Inf(1), math.Inf(1)
	x1, y1 = math.Inf(-1), math.Inf(-1)
	for _, s := range c.Series {
		for i := range s.X {
			x, y := c.xv(s.X[i]), s.Y[i]
			if math.IsNaN(y) || math.IsNaN(x) || math.IsInf(x, 0) {
				continue
			}
			x0, x1, y0, y1 = math.Min(x0, x), math.Max(x1, x), math.Min(y0, y), math.Max(y1, y)
			for _, band := range [][]float64{s.Lo, s.Hi} {
				if i < len(band) && !math.IsNaN(band[i]) {
					y0, y1 = math.Min(y0, band[i]), math.Max(y1, band[i])
				}
			}
		}
	}
	if math.IsInf(x0, 1) {
		return 0, 1, 0, 1
	}
	if c.YLo < c.YHi {
		y0, y1 = c.YLo, c.YHi
	}
	if x1 == x0 {
		x0, x1 = x0-1, x1+1
	}
	if y1 == y0 {
		y0, y1 = y0-1, y1+1
	}
	return x0, x1, y0, y1
}

// integralX reports whether every x is a whole number (rounds, severities).
func (c LineChart) integralX() bool {
	for _, s := range c.Series {
		for _, x := range s.X {
			if x != math.Trunc(x) {
				return false
			}
		}
	}
	return !c.LogX
}

func (c LineChart) xv(x float64) float64 {
	if c.LogX {
		return math.Log10(x)
	}
	return x
}

// SVG renders the chart. Points with a NaN y are gaps in their line.
func (c LineChart) SVG() string {
	w, h := c.Width, c.Height
	if w == 0 || h == 0 {
		w, h = 640, 400
	}
	// The legend goes to the right of the plot when its names are short, else below it
	// in as many columns as fit.
	nameLen := 0
	for _, s := range c.Series {
		nameLen = max(nameLen, len([]rune(s.Name)))
	}
	entryW := float64(7*nameLen + 44)
	left, right, top, bottom := 64.0, 16.0, 36.0, 52.0
	legendBelow := nameLen > 22
	legendCols, legendRows := 1, len(c.Series)
	if legendBelow {
		legendCols = max(1, int((float64(w)-left-right)/entryW))
		legendRows = (len(c.Series) + legendCols - 1) / legendCols
		h += 20*legendRows + 8
	} else {
		right += entryW
	}
	pw, ph := float64(w)-left-right, float64(h)-top-bottom
	if legendBelow {
		ph -= float64(20*legendRows + 8)
	}
	x0, x1, y0, y1 := c.bounds()
	xt := Ticks(x0, x1, 7)
	if c.integralX() && len(xt) > 1 && xt[1]-xt[0] < 1 {
		xt = Ticks(x0, x1, int(x1-x0)+1)
	}
	if c.LogX { // ticks at the data's own x values (e.g. the quantiles of a sweep)
		xt = nil
		for _, s := range c.Series {
			for _, x := range s.X {
				if v := c.xv(x); !slices.Contains(xt, v) {
					xt = append(xt, v)
				}
			}
		}
	}
	yt := Ticks(y0, y1, 6)
	if len(yt) > 1 { // extend the y range to whole ticks
		step := yt[1] - yt[0]
		y0, y1 = math.Floor(y0/step+1e-9)*step, math.Ceil(y1/step-1e-9)*step
		yt = Ticks(y0, y1, 6)
	}
	px := func(x float64) float64 { return left + (c.xv(x)-x0)/(x1-x0)*pw }
	py := func(y float64) float64 { return top + ph - (y-y0)/(y1-y0)*ph }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s font-size="13">`+"\n", w, h, w, h, font)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%s" y="22" text-anchor="middle" font-size="15" font-weight="bold">%s</text>`+"\n", num(left+pw/2), esc(c.Title))
	// Grid lines and ticks.
	b.WriteString(`<g class="axes" stroke="#d9d9d9" stroke-width="1">` + "\n")
	for _, t := range yt {
		if t < y0 || t > y1 {
			continue
		}
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", num(left), num(py(t)), num(left+pw), num(py(t)))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#333333"/>`+"\n", num(left), num(top), num(pw), num(ph))
	b.WriteString(`<g class="ticks" fill="#222222">` + "\n")
	for _, t := range yt {
		if t < y0 || t > y1 {
			continue
		}
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333333"/><text x="%s" y="%s" text-anchor="end">%s</text>`+"\n",
			num(left-5), num(py(t)), num(left), num(py(t)), num(left-8), num(py(t)+4), tickLabel(t))
	}
	slices.Sort(xt)
	lastLabel := math.Inf(-1) // right end of the last label drawn
	for _, t := range xt {
		if t < x0-1e-9 || t > x1+1e-9 {
			continue
		}
		v := t
		if c.LogX {
			v = math.Pow(10, t)
		}
		label := tickLabel(v)
		if c.XTick != nil {
			label = c.XTick(v)
		}
		x := left + (t-x0)/(x1-x0)*pw
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333333"/>`, num(x), num(top+ph), num(x), num(top+ph+5))
		// A label that would overlap the previous one is left out; its tick stays.
		if half := 3.6 * float64(len(label)); x-half > lastLabel+4 {
			fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, num(x), num(top+ph+19), label)
			lastLabel = x + half
		}
		b.WriteString("\n")
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(left+pw/2), num(top+ph+40), esc(c.XLabel))
	fmt.Fprintf(&b, `<text transform="translate(16 %s) rotate(-90)" text-anchor="middle">%s</text>`+"\n", num(top+ph/2), esc(c.YLabel))
	// Lines, markers and the legend.
	for i, s := range c.Series {
		col := Palette[i%len(Palette)]
		fmt.Fprintf(&b, `<g class="series" data-name="%s" stroke="%s" fill="%s">`+"\n", esc(s.Name), col, col)
		if len(s.Lo) == len(s.X) && len(s.Hi) == len(s.X) {
			var up, down []string
			for j := range s.X {
				if !math.IsNaN(s.Lo[j]) && !math.IsNaN(s.Hi[j]) {
					up = append(up, num(px(s.X[j]))+","+num(py(s.Hi[j])))
					down = append([]string{num(px(s.X[j])) + "," + num(py(s.Lo[j]))}, down...)
				}
			}
			if len(up) > 1 {
				fmt.Fprintf(&b, `<polygon class="band" points="%s" fill-opacity="0.18" stroke="none"/>`+"\n", strings.Join(append(up, down...), " "))
			}
		}
		var path strings.Builder
		pen := false
		for j := range s.X {
			if j >= len(s.Y) || math.IsNaN(s.Y[j]) {
				pen = false
				continue
			}
			op := "L"
			if !pen {
				op = "M"
			}
			fmt.Fprintf(&path, "%s%s %s ", op, num(px(s.X[j])), num(py(s.Y[j])))
			pen = true
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke-width="2"/>`+"\n", strings.TrimSpace(path.String()))
		if len(s.X) <= 60 {
			for j := range s.X {
				if j < len(s.Y) && !math.IsNaN(s.Y[j]) {
					b.WriteString(marker(markers[i%len(markers)], px(s.X[j]), py(s.Y[j]), 3.5))
				}
			}
		}
		b.WriteString("</g>\n")
		ly := top + 8 + float64(i)*20
		lx := left + pw + 14
		if legendBelow {
			lx = left + float64(i%legendCols)*entryW
			ly = top + ph + 62 + float64(i/legendCols)*20
		}
		fmt.Fprintf(&b, `<g class="legend" stroke="%s" fill="%s"><line x1="%s" y1="%s" x2="%s" y2="%s" stroke-width="2"/>%s<text x="%s" y="%s" stroke="none" fill="#222222">%s</text></g>`+"\n",
			col, col, num(lx), num(ly), num(lx+24), num(ly), marker(markers[i%len(markers)], lx+12, ly, 3.5), num(lx+30), num(ly+4), esc(s.Name))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if n < 2 || len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// marker draws one point symbol centred at (x, y).
func marker(shape string, x, y, r float64) string {
	switch shape {
	case "square":
		return fmt.Sprintf(`<rect x="%s" y="%s" width="%s" height="%s" stroke="none"/>`, num(x-r), num(y-r), num(2*r), num(2*r))
	case "triangle":
		return fmt.Sprintf(`<path d="M%s %s L%s %s L%s %s Z" stroke="none"/>`, num(x), num(y-r*1.2), num(x+r*1.1), num(y+r*0.8), num(x-r*1.1), num(y+r*0.8))
	case "diamond":
		return fmt.Sprintf(`<path d="M%s %s L%s %s L%s %s L%s %s Z" stroke="none"/>`, num(x), num(y-r*1.3), num(x+r*1.3), num(y), num(x), num(y+r*1.3), num(x-r*1.3), num(y))
	}
	return fmt.Sprintf(`<circle cx="%s" cy="%s" r="%s" stroke="none"/>`, num(x), num(y), num(r))
}
