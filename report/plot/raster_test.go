package plot

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"strconv"
	"strings"
	"testing"
)

// decodePNG decodes a PNG and checks its size.
func decodePNG(t *testing.T, b []byte, w, h int) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if got := img.Bounds().Size(); got != image.Pt(w, h) {
		t.Fatalf("PNG is %v, want %d×%d", got, w, h)
	}
	return img
}

// rgb parses "#rrggbb".
func rgb(t *testing.T, hex string) [3]float64 {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	return [3]float64{float64(v >> 16 & 255), float64(v >> 8 & 255), float64(v & 255)}
}

// pixel is the 8-bit colour of a pixel.
func pixel(img image.Image, x, y int) [3]float64 {
	r, g, b, _ := img.At(x, y).RGBA()
	return [3]float64{float64(r >> 8), float64(g >> 8), float64(b >> 8)}
}

// near reports whether two colours differ by at most tol in every channel.
func near(a, b [3]float64, tol float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

// dark counts the pixels of a rectangle darker than mid grey, and returns their bounds.
func dark(img image.Image, r image.Rectangle) (int, image.Rectangle) {
	n := 0
	var box image.Rectangle
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if c := pixel(img, x, y); c[0]+c[1]+c[2] < 3*110 {
				n++
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return n, box
}

// linePoints reads the vertices of the first series' line from a chart's SVG.
func linePoints(t *testing.T, svg string) [][2]float64 {
	t.Helper()
	for _, e := range elements(t, svg) {
		if e.Name.Local != "path" || attr(e, "fill") != "none" {
			continue
		}
		f := strings.Fields(strings.NewReplacer("M", " ", "L", " ").Replace(attr(e, "d")))
		var out [][2]float64
		for i := 0; i+1 < len(f); i += 2 {
			x, _ := strconv.ParseFloat(f[i], 64)
			y, _ := strconv.ParseFloat(f[i+1], 64)
			out = append(out, [2]float64{x, y})
		}
		return out
	}
	t.Fatal("no line in the SVG")
	return nil
}

func TestLineChartPNG(t *testing.T) {
	c := LineChart{Title: "Accuracy of all rounds", XLabel: "round", YLabel: "test accuracy (%)", Series: []Series{
		{Name: "fedavg", X: []float64{1, 2, 3, 4}, Y: []float64{10, 20, 30, 40}},
	}}
	svg := c.SVG()
	b, err := c.PNG(0)
	if err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, b, 2*640, 2*400)
	p := linePoints(t, svg)
	if len(p) != 4 {
		t.Fatalf("line has %d points, want 4", len(p))
	}
	at := func(x, y float64) (int, int) { return int(DefaultScale * x), int(DefaultScale * y) }
	blue := rgb(t, Palette[0])
	// The middle of a segment and a marker are the series' colour...
	for _, q := range [][2]float64{{(p[1][0] + p[2][0]) / 2, (p[1][1] + p[2][1]) / 2}, p[0], p[3]} {
		if x, y := at(q[0], q[1]); !near(pixel(img, x, y), blue, 8) {
			t.Errorf("pixel (%d, %d) on the line is %v, want the series' %s", x, y, pixel(img, x, y), Palette[0])
		}
	}
	// ...and a spot of the plot far from the line (x = 3.8, y = 15: bottom right, between
	// grid lines) is the white background.
	fx := p[0][0] + (3.8-1)/3*(p[3][0]-p[0][0])
	fy := p[0][1] + (15.0-10)/30*(p[3][1]-p[0][1])
	x0, y0 := at(fx, fy)
	for y := y0 - 3; y <= y0+3; y++ {
		for x := x0 - 3; x <= x0+3; x++ {
			if c := pixel(img, x, y); c != [3]float64{255, 255, 255} {
				t.Fatalf("pixel (%d, %d) far from the line is %v, want white", x, y, c)
			}
		}
	}
	// The title is drawn above the plot (the SVG's baseline is at y = 22), the y label
	// turned upright along the left edge.
	if n, _ := dark(img, image.Rect(0, 0, img.Bounds().Dx(), 2*30)); n < 300 {
		t.Errorf("only %d dark pixels in the title's band", n)
	}
	n, box := dark(img, image.Rect(0, 0, 2*24, img.Bounds().Dy()))
	if n < 200 || box.Dy() < 3*box.Dx() {
		t.Errorf("y label: %d dark pixels in %v, want upright text", n, box)
	}
	// Equal input, equal bytes; and the method is the package function on the chart's SVG.
	again, err := PNG(svg, 2)
	if err != nil || !bytes.Equal(b, again) {
		t.Errorf("two renders differ (%v)", err)
	}
	small, err := c.PNG(1)
	if err != nil {
		t.Fatal(err)
	}
	decodePNG(t, small, 640, 400)
}

// The band is drawn translucent over the background, the line opaque over it.
func TestBandPNG(t *testing.T) {
	s := Series{Name: "fedavg", X: []float64{1, 2, 3}, Y: []float64{50, 60, 70},
		Lo: []float64{40, 50, 60}, Hi: []float64{60, 70, 80}}
	c := LineChart{Title: "t", Series: []Series{s}}
	b, err := c.PNG(0)
	if err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, b, 1280, 800)
	p := linePoints(t, c.SVG())
	// At x = 1.5, the line is at y = 55; y = 62 is inside the band, 7 units above it.
	x := (p[0][0] + p[1][0]) / 2
	y := p[0][1] + (62.0-50)/10*(p[1][1]-p[0][1])
	col := rgb(t, Palette[0])
	var want [3]float64
	for i := range want {
		want[i] = 255 + 0.18*(col[i]-255)
	}
	if got := pixel(img, int(2*x), int(2*y)); !near(got, want, 4) {
		t.Errorf("inside the band: %v, want %v (the colour at 18%% over white)", got, want)
	}
	if got := pixel(img, int(2*x), int(2*(p[0][1]+p[1][1])/2)); !near(got, col, 8) {
		t.Errorf("the line over the band: %v, want %v", got, col)
	}
}

func TestHeatmapPNG(t *testing.T) {
	h := Heatmap{Title: "IoU", Scale: "IoU (%)", Min: 0, Max: 100, Panels: []Panel{
		{Title: "conv1", Labels: []string{"0", "1"}, Values: [][]float64{{100, 0}, {0, math.NaN()}}},
		{Title: "fc", Labels: []string{"0", "1"}, Values: [][]float64{{100, 50}, {50, 100}}},
	}}
	svg := h.SVG()
	els := elements(t, svg)
	w, _ := strconv.Atoi(attr(els[0], "width"))
	ht, _ := strconv.Atoi(attr(els[0], "height"))
	b, err := h.PNG(0)
	if err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, b, 2*w, 2*ht)
	// Every cell's centre has the cell's colour (of the scale, or grey for NaN).
	cells := 0
	for _, e := range els {
		if e.Name.Local != "rect" || attr(e, "stroke") != "" || attr(e, "width") == "16" || attr(e, "x") == "" {
			continue
		}
		v := make([]float64, 4)
		for i, k := range []string{"x", "y", "width", "height"} {
			v[i], _ = strconv.ParseFloat(attr(e, k), 64)
		}
		x, y := int(2*(v[0]+v[2]/2)), int(2*(v[1]+v[3]/2))
		if got, want := pixel(img, x, y), rgb(t, attr(e, "fill")); !near(got, want, 2) {
			t.Errorf("cell at (%d, %d) is %v, want %s", x, y, got, attr(e, "fill"))
		}
		cells++
	}
	if cells != 8 {
		t.Errorf("%d cells checked, want 8", cells)
	}
	again, err := h.PNG(0)
	if err != nil || !bytes.Equal(b, again) {
		t.Errorf("two renders differ (%v)", err)
	}
}

// Anything outside the SVG this package writes is an error, not a silent gap in the PNG.
func TestRasterizeRejectsWhatItCannotDraw(t *testing.T) {
	doc := func(body string) string {
		return `<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10">` + body + `</svg>`
	}
	if _, err := PNG(doc(`<rect x="1" y="1" width="5" height="5" fill="#ff0000"/><path d="M1 1 L5 5 Z"/>`), 1); err != nil {
		t.Fatalf("a supported document: %v", err)
	}
	for _, bad := range []string{
		doc(`<ellipse cx="5" cy="5" rx="2" ry="1"/>`),
		doc(`<path d="M1 1 C2 2 3 3 4 4"/>`),
		doc(`<rect width="5" height="5" opacity="0.5"/>`),
		doc(`<rect width="5" height="5" fill="red"/>`),
		doc(`<text transform="rotate(45)">x</text>`),
		`<g><rect width="5" height="5"/></g>`,
		doc(`<rect width="5"`),
		`<svg xmlns="http://www.w3.org/2000/svg" width="20" height="10" viewBox="0 0 40 20"></svg>`,
	} {
		if _, err := PNG(bad, 1); err == nil {
			t.Errorf("no error for %s", bad)
		}
	}
	if _, err := PNG(doc(""), -1); err == nil {
		t.Error("no error for a negative scale")
	}
}

func TestTransform(t *testing.T) {
	for _, c := range []struct {
		s       string
		tx, ty  float64
		rotated bool
	}{
		{"", 0, 0, false},
		{"translate(16 200.5) rotate(-90)", 16, 200.5, true},
		{"translate(3,4)", 3, 4, false},
	} {
		tx, ty, rot, err := transform(c.s)
		if err != nil || tx != c.tx || ty != c.ty || rot != c.rotated {
			t.Errorf("transform(%q) = %v %v %v %v", c.s, tx, ty, rot, err)
		}
	}
}
