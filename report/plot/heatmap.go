package plot

import (
	"fmt"
	"math"
	"strings"
)

// viridis stops (matplotlib's viridis at 0, 0.25, 0.5, 0.75, 1), interpolated linearly.
var viridis = [][3]float64{{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}

// Viridis maps t in [0, 1] to a hex colour of the viridis scale (clamped).
func Viridis(t float64) string {
	t = math.Max(0, math.Min(1, t))
	f := t * float64(len(viridis)-1)
	i := min(int(f), len(viridis)-2)
	u := f - float64(i)
	var c [3]int
	for k := range c {
		c[k] = int(math.Round(viridis[i][k] + u*(viridis[i+1][k]-viridis[i][k])))
	}
	return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2])
}

// maxTooltips is the largest matrix whose cells carry a hover tooltip.
const maxTooltips = 24

// Panel is one square matrix of a heatmap figure, e.g. one layer's pairwise mask IoU.
type Panel struct {
	Title string
	// Labels name the rows and columns.
	Labels []string
	// Values[i][j]; NaN draws an empty (grey) cell.
	Values [][]float64
}

// Heatmap is a row of panels sharing one colour scale from Min to Max.
type Heatmap struct {
	Title string
	// Scale labels the colour bar.
	Scale    string
	Min, Max float64
	Panels   []Panel
	// Columns is the number of panels per row (0: up to 4).
	Columns int
}

// SVG renders the panels on a grid with a shared colour bar on the right.
func (h Heatmap) SVG() string {
	cols := h.Columns
	if cols <= 0 {
		cols = min(4, max(1, len(h.Panels)))
	}
	rows := (len(h.Panels) + cols - 1) / cols
	const side, gap, top, barW = 210.0, 46.0, 40.0, 90.0
	w := int(float64(cols)*(side+gap) + gap + barW)
	ht := int(top + float64(max(rows, 1))*(side+gap+18) + 10)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s font-size="12">`+"\n", w, ht, w, ht, font)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", w, ht)
	fmt.Fprintf(&b, `<text x="%s" y="22" text-anchor="middle" font-size="15" font-weight="bold">%s</text>`+"\n", num(float64(w-int(barW))/2), esc(h.Title))
	span := h.Max - h.Min
	if span <= 0 {
		span = 1
	}
	for p, pan := range h.Panels {
		ox := gap + float64(p%cols)*(side+gap)
		oy := top + 18 + float64(p/cols)*(side+gap+18)
		n := len(pan.Values)
		fmt.Fprintf(&b, `<g class="panel" data-name="%s">`+"\n", esc(pan.Title))
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" font-weight="bold">%s</text>`+"\n", num(ox+side/2), num(oy-6), esc(clip(pan.Title, 30)))
		if n == 0 {
			b.WriteString("</g>\n")
			continue
		}
		cell := side / float64(n)
		for i, row := range pan.Values {
			for j, v := range row {
				fill := "#bdbdbd"
				if !math.IsNaN(v) {
					fill = Viridis((v - h.Min) / span)
				}
				fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"`,
					num(ox+float64(j)*cell), num(oy+float64(i)*cell), num(cell+0.3), num(cell+0.3), fill)
				if n <= maxTooltips { // a hover tooltip per cell; large matrices would bloat the file
					fmt.Fprintf(&b, `><title>%s × %s: %.3f</title></rect>`+"\n", esc(label(pan.Labels, i)), esc(label(pan.Labels, j)), v)
				} else {
					b.WriteString("/>\n")
				}
			}
		}
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#333333"/>`+"\n", num(ox), num(oy), num(side), num(side))
		// Label every k-th client so that the labels never overlap.
		k := max(1, int(math.Ceil(14/cell)))
		for i := 0; i < n; i += k {
			c := float64(i)*cell + cell/2
			fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end" font-size="10">%s</text>`+"\n", num(ox-3), num(oy+c+3), esc(label(pan.Labels, i)))
			fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" font-size="10">%s</text>`+"\n", num(ox+c), num(oy+side+12), esc(label(pan.Labels, i)))
		}
		b.WriteString("</g>\n")
	}
	// Colour bar.
	bx, by, bh := float64(w)-barW+10, top+18, side
	for i := 0; i < 50; i++ {
		t := 1 - float64(i)/50
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="16" height="%s" fill="%s"/>`+"\n", num(bx), num(by+float64(i)*bh/50), num(bh/50+0.3), Viridis(t))
	}
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="16" height="%s" fill="none" stroke="#333333"/>`+"\n", num(bx), num(by), num(bh))
	for _, t := range Ticks(h.Min, h.Max, 5) {
		if t < h.Min-1e-9 || t > h.Max+1e-9 {
			continue
		}
		y := by + bh - (t-h.Min)/span*bh
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333333"/><text x="%s" y="%s">%s</text>`+"\n",
			num(bx+16), num(y), num(bx+20), num(y), num(bx+23), num(y+4), tickLabel(t))
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(bx+8), num(by+bh+20), esc(h.Scale))
	b.WriteString("</svg>\n")
	return b.String()
}

func label(l []string, i int) string {
	if i < len(l) {
		return l[i]
	}
	return fmt.Sprint(i)
}
