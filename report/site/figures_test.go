package site

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/report/chart"
)

// svgSize reads the width and height of an SVG's root element, in points.
func svgSize(t *testing.T, svg string) (w, h float64) {
	t.Helper()
	var root struct {
		Width  string `xml:"width,attr"`
		Height string `xml:"height,attr"`
	}
	if err := xml.NewDecoder(strings.NewReader(svg)).Decode(&root); err != nil {
		t.Fatal(err)
	}
	w, _ = strconv.ParseFloat(strings.TrimSuffix(root.Width, "pt"), 64)
	h, _ = strconv.ParseFloat(strings.TrimSuffix(root.Height, "pt"), 64)
	return w, h
}

// Every figure of a report renders in every format, the same bytes from a second report
// of the same store; its PNG is chart.PNGScale times the SVG's size in CSS pixels, with
// something drawn on it.
func TestFigureFiles(t *testing.T) {
	_, g, store := tinyRun(t)
	s, err := BuildWith(Options{Formats: chart.Formats}, store, g)
	if err != nil {
		t.Fatal(err)
	}
	again, err := BuildWith(Options{Formats: chart.Formats}, store, g)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Figures) == 0 || len(again.Figures) != len(s.Figures) {
		t.Fatalf("%d and %d figures", len(s.Figures), len(again.Figures))
	}
	if s.HTML != again.HTML {
		t.Error("two builds give different pages")
	}
	for i, f := range s.Figures {
		for _, format := range chart.Formats {
			b, err := f.Render(format)
			if err != nil {
				t.Fatalf("%s.%s: %v", f.Name, format, err)
			}
			b2, err := again.Figures[i].Render(format)
			if err != nil || !bytes.Equal(b, b2) {
				t.Errorf("%s.%s: a second render differs (%v)", f.Name, format, err)
			}
			if format == "pdf" && !bytes.HasPrefix(b, []byte("%PDF-")) {
				t.Errorf("%s.pdf is not a PDF", f.Name)
			}
			if format != "png" {
				continue
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s: not a PNG: %v", f.Name, err)
			}
			w, h := svgSize(t, f.SVG)
			px := func(pt float64) int { return int(math.Round(pt / 72 * 96 * chart.PNGScale)) }
			if got := img.Bounds().Size(); got.X != px(w) || got.Y != px(h) {
				t.Errorf("%s: PNG is %v, SVG %g×%gpt", f.Name, got, w, h)
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
		}
	}
	for _, want := range []string{"figures/accuracy-rounds.pdf", "figures/accuracy-rounds.png"} {
		if !strings.Contains(s.Markdown, "("+want+")") || !strings.Contains(s.HTML, `href="`+want+`"`) {
			t.Errorf("%s is not linked from the markdown and the page", want)
		}
	}
}

// The default formats are SVG and PNG; an unknown one is refused.
func TestFigureFormats(t *testing.T) {
	if got, err := figureFormats(nil); err != nil || strings.Join(got, ",") != "svg,png" {
		t.Errorf("default formats %q (%v)", got, err)
	}
	if got, err := figureFormats([]string{"pdf", "svg"}); err != nil || strings.Join(got, ",") != "svg,pdf" {
		t.Errorf("formats %q (%v), want svg,pdf in chart.Formats' order", got, err)
	}
	if _, err := figureFormats([]string{"eps"}); err == nil {
		t.Error("eps accepted")
	}
}
