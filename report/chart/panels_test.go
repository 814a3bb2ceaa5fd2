package chart

import (
	"regexp"
	"strings"
	"testing"
)

// Panels: one figure, each panel labelled by its cell, one legend naming each series once,
// and a series drawn in the same colour in every panel even where an earlier series is
// missing from a panel.
func TestPanelsShareOneLegendAndStyles(t *testing.T) {
	a := Series{Name: "FedAvg", X: []float64{1, 2, 3}, Y: []float64{40, 50, 55}}
	b := Series{Name: "Local", X: []float64{1, 2, 3}, Y: []float64{80, 85, 90}}
	p := Panels{Lines: []Line{
		{Title: "alpha=0.1", XLabel: "round", YLabel: "acc", Series: []Series{a, b}},
		{Title: "alpha=0.5", XLabel: "round", YLabel: "acc", Series: []Series{b}}, // Local alone: still Local's colour
	}}
	svg, err := p.Render("svg")
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	for _, want := range []string{">alpha=0.1<", ">alpha=0.5<"} {
		if strings.Count(s, want) != 1 {
			t.Errorf("panel label %s appears %d times", want, strings.Count(s, want))
		}
	}
	for _, name := range []string{">FedAvg<", ">Local<"} {
		if n := strings.Count(s, name); n != 1 {
			t.Errorf("legend entry %s appears %d times, want once", name, n)
		}
	}
	// Local's line colour: the second palette colour, in both panels and the legend.
	r, g, bl, _ := Palette[1].RGBA()
	hex := regexp.MustCompile(`stroke:#[0-9a-fA-F]{6}`)
	want := "stroke:#" + hexRGB(uint8(r>>8), uint8(g>>8), uint8(bl>>8))
	if n := strings.Count(strings.ToLower(strings.Join(hex.FindAllString(s, -1), " ")), want); n < 3 {
		t.Errorf("Local's colour %s drawn %d times, want in both panels and the legend (≥ 3)", want, n)
	}
	for _, f := range []string{"png", "pdf"} {
		if _, err := p.Render(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func hexRGB(r, g, b uint8) string {
	const d = "0123456789abcdef"
	return string([]byte{d[r>>4], d[r&15], d[g>>4], d[g&15], d[b>>4], d[b&15]})
}
