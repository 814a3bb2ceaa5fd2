package page

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// The chart's size in pixels: the plot area is inset by the margins; the data are drawn
// inside it, pad pixels from its edges.
const (
	svgW, svgH                         = 600, 300
	marginL, marginR, marginT, marginB = 64, 16, 28, 40
	pad                                = 8
	// PlotFill is the plot area's background colour (a screenshot finds the plot by it).
	PlotFill = "#f5f7fb"
)

// SVG draws a chart as inline SVG: per curve a band over its seeds (min–max), the mean as
// a line, and a point per round whose title gives the round, the mean, the range and how
// many seeds have it (a hollow point: fewer than the curve's seeds); the published numbers
// as dashed lines. Everything is drawn here: no script, no font or file from elsewhere.
func SVG(ch Chart) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range ch.Lines {
		for _, s := range l.Stats {
			lo, hi = min(lo, s.Min), max(hi, s.Max)
		}
	}
	for _, r := range ch.Refs {
		lo, hi = min(lo, r.Value), max(hi, r.Value)
	}
	if hi-lo < 1e-9 {
		lo, hi = lo-0.5, hi+0.5
	}
	step := niceStep((hi - lo) / 5)
	lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	rounds := max(ch.Rounds, 2)
	for _, l := range ch.Lines {
		rounds = max(rounds, l.Stats[len(l.Stats)-1].Round)
	}
	x0, x1 := float64(marginL+pad), float64(svgW-marginR-pad)
	y0, y1 := float64(svgH-marginB-pad), float64(marginT+pad)
	X := func(round int) float64 { return x0 + (x1-x0)*float64(round-1)/float64(rounds-1) }
	Y := func(v float64) float64 { return y0 + (y1-y0)*(v-lo)/(hi-lo) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-metric="%s" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`,
		ch.Metric.ID, svgW, svgH, svgW, svgH)
	fmt.Fprintf(&b, `<text x="%d" y="16" font-size="13" font-weight="600">%s</text>`, marginL, html.EscapeString(ch.Metric.Title))
	fmt.Fprintf(&b, `<rect class="plot" x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#999"/>`,
		marginL, marginT, svgW-marginL-marginR, svgH-marginT-marginB, PlotFill)
	for v := lo; v <= hi+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#999"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`,
			marginL-4, marginL, Y(v), Y(v), marginL-6, Y(v)+4, tick(v, step))
	}
	for _, r := range roundTicks(rounds) {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#999"/><text x="%.1f" y="%d" text-anchor="middle">%d</text>`,
			X(r), X(r), svgH-marginB, svgH-marginB+4, X(r), svgH-marginB+16, r)
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">round</text>`, (x0+x1)/2, svgH-6)
	fmt.Fprintf(&b, `<text transform="translate(14 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, (y0+y1)/2, html.EscapeString(ch.Metric.YLabel))
	for _, r := range ch.Refs {
		fmt.Fprintf(&b, `<line class="ref" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="6 4"><title>%s</title></line>`,
			X(1), X(rounds), Y(r.Value), Y(r.Value), r.Curve.Color, html.EscapeString(r.Label))
	}
	for _, l := range ch.Lines {
		c := l.Curve
		first, last := l.Stats[0].Round, l.Stats[len(l.Stats)-1].Round
		fmt.Fprintf(&b, `<g class="curve" data-name="%s" data-color="%s" data-seeds="%d" data-first-round="%d" data-last-round="%d">`,
			html.EscapeString(c.Name), c.Color, c.Seeds, first, last)
		for _, band := range bands(l.Stats) {
			var pts []string
			for _, s := range band {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", X(s.Round), Y(s.Max)))
			}
			for i := len(band) - 1; i >= 0; i-- {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", X(band[i].Round), Y(band[i].Min)))
			}
			fmt.Fprintf(&b, `<polygon points="%s" fill="%s" fill-opacity="0.18" stroke="none"/>`, strings.Join(pts, " "), c.Color)
		}
		var pts []string
		for _, s := range l.Stats {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", X(s.Round), Y(s.Mean)))
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`, strings.Join(pts, " "), c.Color)
		for _, s := range l.Stats {
			fill := c.Color
			if s.N < c.Seeds {
				fill = "#fff"
			}
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s" stroke="%s" data-seeds="%d"><title>%s</title></circle>`,
				X(s.Round), Y(s.Mean), fill, c.Color, s.N, html.EscapeString(pointTitle(c, s)))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// pointTitle is a point's tooltip: its curve, round, mean, range and seeds.
func pointTitle(c *Curve, s Stat) string {
	t := fmt.Sprintf("%s, round %d: %.4g", c.Name, s.Round, s.Mean)
	if s.N > 1 {
		t += fmt.Sprintf(" (mean; min %.4g, max %.4g)", s.Min, s.Max)
	}
	return t + fmt.Sprintf(", %d of %d seeds", s.N, c.Seeds)
}

// bands splits a line's rounds into the runs of consecutive points that two or more seeds
// have (a band needs a range).
func bands(stats []Stat) [][]Stat {
	var out [][]Stat
	var cur []Stat
	for _, s := range stats {
		if s.N > 1 {
			cur = append(cur, s)
			continue
		}
		if len(cur) > 0 {
			out, cur = append(out, cur), nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// niceStep rounds a raw tick step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// tick writes a y tick's value with as many decimals as the step needs.
func tick(v, step float64) string {
	d := max(0, int(math.Ceil(-math.Log10(step))))
	return fmt.Sprintf("%.*f", d, v)
}

// roundTicks are about six round numbers from 1 to rounds.
func roundTicks(rounds int) []int {
	step := max(1, int(niceStep(float64(rounds)/6)))
	out := []int{1}
	for r := step; r <= rounds; r += step {
		if r > 1 {
			out = append(out, r)
		}
	}
	return out
}
