package site

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"strconv"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/report/plot"
)

// svgSize reads the width and height of an SVG's root element.
func svgSize(t *testing.T, svg string) (w, h int) {
	t.Helper()
	var root struct {
		Width  string `xml:"width,attr"`
		Height string `xml:"height,attr"`
	}
	if err := xml.NewDecoder(strings.NewReader(svg)).Decode(&root); err != nil {
		t.Fatal(err)
	}
	w, _ = strconv.Atoi(root.Width)
	h, _ = strconv.Atoi(root.Height)
	return w, h
}

// Every figure of a report renders as a PNG of twice the SVG's size with something drawn
// on it, the same bytes each time.
func TestFigurePNGs(t *testing.T) {
	_, g, store := tinyRun(t)
	s, err := Build(store, g)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Figures) == 0 {
		t.Fatal("no figures")
	}
	for _, f := range s.Figures {
		b, err := f.PNG()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: not a PNG: %v", f.Name, err)
		}
		w, h := svgSize(t, f.SVG)
		if got := img.Bounds().Size(); got.X != plot.DefaultScale*w || got.Y != plot.DefaultScale*h {
			t.Errorf("%s: PNG is %v, SVG %d×%d", f.Name, got, w, h)
		}
		// Drawn on: a good share of the pixels is not the white background.
		inked, n := 0, 0
		for y := 0; y < img.Bounds().Dy(); y += 3 {
			for x := 0; x < img.Bounds().Dx(); x += 3 {
				if r, g, b, _ := img.At(x, y).RGBA(); min(r, g, b) < 0xf000 {
					inked++
				}
				n++
			}
		}
		if inked < n/100 {
			t.Errorf("%s: only %d of %d sampled pixels are not white", f.Name, inked, n)
		}
		if again, err := f.PNG(); err != nil || !bytes.Equal(again, b) {
			t.Errorf("%s: a second render differs (%v)", f.Name, err)
		}
	}
}
