package plot

import (
	"math"
	"strings"
	"testing"
)

// A series with Lo/Hi draws a shaded band; YLo/YHi fix the y range (issue 18).
func TestLineChartBandAndFixedRange(t *testing.T) {
	s := Series{Name: "fedavg", X: []float64{1, 2, 3}, Y: []float64{50, 60, 70},
		Lo: []float64{45, math.NaN(), 65}, Hi: []float64{55, math.NaN(), 75}}
	svg := LineChart{Title: "t", Series: []Series{s}}.SVG()
	if strings.Count(svg, `class="band"`) != 1 {
		t.Errorf("no band:\n%s", svg)
	}
	if !strings.Contains(svg, ">75<") && !strings.Contains(svg, ">80<") {
		t.Errorf("the y axis does not reach the band's top (75):\n%s", svg)
	}
	fixed := LineChart{Title: "t", Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{50, 60}}}, YLo: 0, YHi: 100}.SVG()
	if !strings.Contains(fixed, ">0<") || !strings.Contains(fixed, ">100<") {
		t.Errorf("fixed range 0-100 not drawn:\n%s", fixed)
	}
	if strings.Contains(fixed, `class="band"`) {
		t.Error("a band without Lo/Hi")
	}
}
