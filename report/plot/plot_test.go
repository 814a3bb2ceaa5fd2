package plot

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		n      int
		want   []float64
	}{
		{0, 100, 6, []float64{0, 20, 40, 60, 80, 100}},
		{1, 4, 4, []float64{1, 2, 3, 4}},
		{0.13, 0.91, 5, []float64{0.2, 0.4, 0.6, 0.8}},
		{-3, 3, 4, []float64{-2, 0, 2}},
		{5, 5, 4, []float64{5}},
	} {
		if got := Ticks(c.lo, c.hi, c.n); !slices.Equal(got, c.want) {
			t.Errorf("Ticks(%v, %v, %d) = %v, want %v", c.lo, c.hi, c.n, got, c.want)
		}
	}
}

func TestViridisEnds(t *testing.T) {
	if got := Viridis(0); got != "#440154" {
		t.Errorf("Viridis(0) = %s", got)
	}
	if got := Viridis(1); got != "#fde725" {
		t.Errorf("Viridis(1) = %s", got)
	}
	if Viridis(-1) != Viridis(0) || Viridis(2) != Viridis(1) {
		t.Error("Viridis does not clamp")
	}
}

// elements parses an SVG strictly and returns its elements' names with their attributes.
func elements(t *testing.T, svg string) []xml.StartElement {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	d.Strict = true
	var out []xml.StartElement
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, svg)
		}
		if s, ok := tok.(xml.StartElement); ok {
			out = append(out, s.Copy())
		}
	}
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func TestLineChartDrawsEverySeriesWithGaps(t *testing.T) {
	c := LineChart{Title: "a <b> & c", XLabel: "round", YLabel: "accuracy (%)", Series: []Series{
		{Name: "fedavg", X: []float64{1, 2, 3, 4}, Y: []float64{10, 20, math.NaN(), 40}},
		{Name: "fed<select>", X: []float64{1, 2, 3, 4}, Y: []float64{50, 60, 70, 80}},
	}}
	var paths, names []string
	texts := 0
	for _, e := range elements(t, c.SVG()) {
		switch {
		case e.Name.Local == "g" && attr(e, "class") == "series":
			names = append(names, attr(e, "data-name"))
		case e.Name.Local == "path" && attr(e, "fill") == "none":
			paths = append(paths, attr(e, "d"))
		case e.Name.Local == "text":
			texts++
		}
	}
	if !slices.Equal(names, []string{"fedavg", "fed<select>"}) {
		t.Errorf("series %q", names)
	}
	if len(paths) != 2 {
		t.Fatalf("%d line paths, want 2", len(paths))
	}
	// The NaN breaks the first line into two pieces: two moves.
	if n := strings.Count(paths[0], "M"); n != 2 {
		t.Errorf("first line has %d pieces, want 2: %s", n, paths[0])
	}
	if n := strings.Count(paths[1], "L"); n != 3 {
		t.Errorf("second line has %d segments, want 3", n)
	}
	// Title, axis labels, 2 legend names and the ticks (y 10..80 → 0..80 by 20: 5, x 1..4: 4).
	if texts != 3+2+5+4 {
		t.Errorf("%d text elements, want %d", texts, 14)
	}
}

func TestHeatmapCellsUseTheScale(t *testing.T) {
	h := Heatmap{Title: "IoU", Scale: "IoU (%)", Min: 0, Max: 100, Panels: []Panel{
		{Title: "conv1", Labels: []string{"0", "1"}, Values: [][]float64{{100, 0}, {0, math.NaN()}}},
		{Title: "fc", Labels: []string{"0", "1"}, Values: [][]float64{{100, 50}, {50, 100}}},
	}}
	var fills []string
	var panels []string
	for _, e := range elements(t, h.SVG()) {
		if e.Name.Local == "g" && attr(e, "class") == "panel" {
			panels = append(panels, attr(e, "data-name"))
		}
		if e.Name.Local == "rect" && len(fills) < 8 && strings.HasPrefix(attr(e, "fill"), "#") && attr(e, "width") != "16" {
			fills = append(fills, attr(e, "fill"))
		}
	}
	if !slices.Equal(panels, []string{"conv1", "fc"}) {
		t.Errorf("panels %q", panels)
	}
	// fills[0] is the background; then conv1's four cells and fc's first three.
	want := []string{"#ffffff", Viridis(1), Viridis(0), Viridis(0), "#bdbdbd", Viridis(1), Viridis(0.5), Viridis(0.5)}
	if !slices.Equal(fills, want) {
		t.Errorf("fills %v, want %v", fills, want)
	}
}

func TestLargeHeatmapsHaveNoTooltips(t *testing.T) {
	for _, n := range []int{maxTooltips, maxTooltips + 1} {
		v := make([][]float64, n)
		for i := range v {
			v[i] = make([]float64, n)
		}
		svg := Heatmap{Min: 0, Max: 1, Panels: []Panel{{Title: "p", Values: v}}}.SVG()
		elements(t, svg) // still well-formed
		want := 0
		if n <= maxTooltips {
			want = n * n
		}
		if got := strings.Count(svg, "<title>"); got != want {
			t.Errorf("%d×%d: %d tooltips, want %d", n, n, got, want)
		}
	}
}
