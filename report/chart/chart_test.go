package chart

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// samples are charts like the report's: curves with a band and a gap, a log-x sweep, a
// long-named legend below the plot and heatmap panels with an undefined cell.
func samples() map[string]Chart {
	nan := math.NaN()
	return map[string]Chart{
		"line": Line{Title: "Test accuracy per round", XLabel: "round", YLabel: "test accuracy (%)", Series: []Series{
			{Name: "fedavg", X: []float64{1, 2, 3, 4}, Y: []float64{40, 55, 61, 66}, Lo: []float64{38, 52, 60, 63}, Hi: []float64{42, 58, 62, 69}},
			{Name: "fedselect", X: []float64{1, 2, 3, 4}, Y: []float64{45, nan, 70, 74}},
		}},
		"logx": Line{Title: "FedOBP: importance score vs quantile", XLabel: "quantile q (axis: 1 − q, log scale)", YLabel: "accuracy (%)", LogX: true,
			XTick:  func(x float64) string { return num(1 - x) },
			Series: []Series{{Name: "obp", X: []float64{0.5, 0.1, 0.01}, Y: []float64{60, 65, 62}}, {Name: "gradient", X: []float64{0.5, 0.1, 0.01}, Y: []float64{58, 63, 64}}}},
		"below": Line{Title: "Accuracy vs shift degree (α=0.5)", XLabel: "shift degree d", YLabel: "accuracy (%)", YLo: 0, YHi: 100, Series: []Series{
			{Name: "fedobp score=gradient q=0.9", X: []float64{0, 0.5, 1}, Y: []float64{80, 60, 40}},
			{Name: "fedobp score=obp q=0.5 local_epochs=2", X: []float64{0, 0.5, 1}, Y: []float64{82, 65, 45}},
			{Name: "fedavg", X: []float64{0, 0.5, 1}, Y: []float64{70, 69, 68}},
		}},
		"heatmap": Heatmap{Title: "Mask IoU between clients: fedselect", Scale: "IoU (%)", Min: 0, Max: 100, Panels: []Panel{
			{Title: "fc1.weight", Labels: []string{"0", "1", "2"}, Values: [][]float64{{100, 40, 20}, {40, 100, nan}, {20, nan, 100}}},
			{Title: "classifier.bias", Labels: []string{"0", "1", "2"}, Values: [][]float64{{100, 90, 80}, {90, 100, 70}, {80, 70, 100}}},
		}},
	}
}

// Every format of every chart is the same bytes when drawn twice, and is what it says it
// is. FEDPIPE_CHART_DIR, when set, keeps the files for a look.
func TestRenderIsDeterministic(t *testing.T) {
	keep := os.Getenv("FEDPIPE_CHART_DIR")
	for name, c := range samples() {
		for _, format := range Formats {
			a, err := c.Render(format)
			if err != nil {
				t.Fatalf("%s.%s: %v", name, format, err)
			}
			b, err := c.Render(format)
			if err != nil {
				t.Fatalf("%s.%s: %v", name, format, err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("%s.%s: two renders differ (%d and %d bytes)", name, format, len(a), len(b))
			}
			magic := map[string]string{"svg": "<?xml", "png": "\x89PNG", "pdf": "%PDF-"}[format]
			if !bytes.HasPrefix(a, []byte(magic)) {
				t.Errorf("%s.%s starts %q", name, format, a[:min(len(a), 8)])
			}
			if keep != "" {
				if err := os.WriteFile(filepath.Join(keep, name+"."+format), a, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// The PDF carries a fixed date, not the time it was drawn.
func TestPDFDateIsFixed(t *testing.T) {
	b, err := samples()["line"].Render("pdf")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/CreationDate (D:20000101000000)", "/ModDate (D:20000101000000)"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("PDF lacks %s", want)
		}
	}
}

// The SVG holds the title, axis labels, every series name and every panel title as text.
func TestSVGHasTheLabels(t *testing.T) {
	for name, want := range map[string][]string{
		"line":    {"Test accuracy per round", "round", "test accuracy (%)", "fedavg", "fedselect"},
		"logx":    {"obp", "gradient", "0.9", "0.99"},
		"below":   {"fedobp score=gradient q=0.9", "fedavg", "α=0.5"},
		"heatmap": {"fc1.weight", "classifier.bias", "IoU (%)"},
	} {
		b, err := samples()[name].Render("svg")
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(b), ">"+w+"</text>") && !strings.Contains(string(b), w+")</text>") {
				t.Errorf("%s.svg has no text %q", name, w)
			}
		}
	}
}

// The PNG is PNGScale times the SVG's size in CSS pixels, and drawn on.
func TestPNGSize(t *testing.T) {
	c := samples()["line"].(Line)
	w, h := c.size()
	b, err := c.Render("png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	px := func(l float64) int { return int(math.Round(l / 72 * 96 * PNGScale)) }
	if got := img.Bounds().Size(); got.X != px(w.Points()) || got.Y != px(h.Points()) {
		t.Errorf("PNG is %v, want %d×%d", got, px(w.Points()), px(h.Points()))
	}
}

// Windows-1252 text for the PDF's fonts: ± and × are in the code page, − and α are spelled.
func TestPDFText(t *testing.T) {
	if got, want := pdfText("1 − q ± α×"), "1 - q \xb1 alpha\xd7"; got != want {
		t.Errorf("pdfText = %q, want %q", got, want)
	}
}

// A chart with no point to draw (all NaN, or no series) still renders, with empty axes.
func TestEmptyChart(t *testing.T) {
	for _, c := range []Chart{Line{Series: []Series{{Name: "x", X: []float64{1, 2}, Y: []float64{math.NaN(), math.NaN()}}}}, Line{}, Heatmap{}} {
		for _, format := range Formats {
			if _, err := c.Render(format); err != nil {
				t.Errorf("%T.%s: %v", c, format, err)
			}
		}
	}
}

func TestUnknownFormat(t *testing.T) {
	if _, err := samples()["line"].Render("eps"); err == nil {
		t.Error("eps rendered")
	}
}

func TestTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		n      int
		want   string
	}{
		{0, 100, 6, "[0 20 40 60 80 100]"},
		{0.1, 0.9, 5, "[0.2 0.4 0.6 0.8]"},
		{1, 4, 7, "[1 1.5 2 2.5 3 3.5 4]"},
		{-1, 1, 3, "[-1 0 1]"},
	} {
		if got := fmt.Sprint(Ticks(c.lo, c.hi, c.n)); got != c.want {
			t.Errorf("Ticks(%v, %v, %d) = %s, want %s", c.lo, c.hi, c.n, got, c.want)
		}
	}
	if got := fmt.Sprint(roundTicks{n: 7, integral: true}.Ticks(1, 4)); !strings.Contains(got, "{1 1}") || strings.Contains(got, "1.5") {
		t.Errorf("integral ticks of 1..4: %s", got)
	}
}

// vgpdf gets a translucent colour's straight channels, not the premultiplied ones (which
// it would draw as a dark grey).
func TestStraightAlpha(t *testing.T) {
	n := color.NRGBA64Model.Convert(color.NRGBA{R: 0x00, G: 0x72, B: 0xB2, A: 0x30}).(color.NRGBA64)
	r, g, b, a := straight(n).RGBA()
	if r>>8 != 0x00 || g>>8 != 0x72 || b>>8 != 0xB2 || a>>8 != 0x30 {
		t.Errorf("straight channels %x %x %x %x", r>>8, g>>8, b>>8, a>>8)
	}
}

// TestLineXRangeHoldsTheRuns: a chart of runs evaluated once, at their last round 5 (two
// methods, a dot each), has an x axis around 5 alone (4 to 6 in the report of issue 62);
// with XLo 1 and XHi 5 it runs from round 1, its ticks 1 to 5.
func TestLineXRangeHoldsTheRuns(t *testing.T) {
	l := Line{XLabel: "round", YLabel: "test accuracy (%)", Series: []Series{
		{Name: "FedAvg", X: []float64{5}, Y: []float64{43.5}}, {Name: "Local", X: []float64{5}, Y: []float64{91.3}}}}
	ticks := func(l Line) string {
		b, err := l.Render("svg")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if svg := ticks(l); strings.Contains(svg, ">1</text>") {
		t.Fatal("without a range the x axis already starts at 1: the test shows nothing")
	}
	l.XLo, l.XHi = 1, 5
	svg := ticks(l)
	for _, tick := range []string{">1</text>", ">3</text>", ">5</text>"} {
		if !strings.Contains(svg, tick) {
			t.Errorf("x axis over rounds 1 to 5 lacks the tick %s", tick)
		}
	}
}
