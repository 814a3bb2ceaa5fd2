package main

import (
	"context"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/report/site"
	"github.com/fedpipe/fedpipe/screens/page"
)

// Two methods of two seeds, first trained for 10 rounds, then extended to 20.
const serveExtendManifest = `name: serve-extend
seeds: [0, 1]
dataset: {name: synthetic, alpha: 0.5, beta: 0.5, devices: 20}
partition: {scheme: natural}
model: {arch: logreg}
train: {rounds: 10, participation: 0.5, local_epochs: 1, batch_size: 16, lr: 0.05, eval_every: 5, checkpoint_every: 5}
methods:
  - name: fedavg
  - name: local
`

// An extended run's page: after 10 rounds, then `-S train.rounds=20` (which continues from
// the 10-round results, so its own journals hold rounds 11–20 only), the page draws FedAvg
// and Local overlaid on one chart per metric, each over rounds 1–20 with both seeds, and says
// that no one holds the finished runs. In headless Chromium, the training-loss chart's plot
// shows each method's colour, and shows it over rounds 1–9: the rounds carried from the
// 10-round runs.
func TestServeOverlaysAnExtendedRun(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, serveExtendManifest)
	for _, args := range [][]string{{"run", m, "--store", store, "-q"}, {"run", m, "--store", store, "-q", "-S", "train.rounds=20"}} {
		if out, err := subprocess(args...).CombinedOutput(); err != nil {
			t.Fatalf("fedpipe %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	url := startServe(t, m, "--store", store, "-S", "train.rounds=20")
	_, body := get(t, url+"body")

	// Each method is one curve of both seeds' 20 rounds, 10 of them carried.
	if n := strings.Count(body, `<tr class="cell" data-points="40" data-finished="true">`); n != 2 {
		t.Errorf("%d curves of 40 points (2 seeds × rounds 1–20), want 2:\n%s", n, body)
	}
	if n := strings.Count(body, "continues the cached 10-round run"); n != 2 {
		t.Errorf("%d curves say they carry 10 rounds, want 2", n)
	}
	if n := strings.Count(body, "none (done)"); n != 4 {
		t.Errorf("%d runs held by no one (done), want 4", n)
	}
	loss := regexp.MustCompile(`(?s)<svg [^>]*data-metric="train_loss".*?</svg>`).FindString(body)
	for i, name := range []string{"FedAvg", "Local"} {
		want := fmt.Sprintf(`data-name="%s" data-color="%s" data-seeds="2" data-first-round="1" data-last-round="20"`, name, page.Palette[i])
		if !strings.Contains(loss, want) {
			t.Errorf("the training-loss chart lacks %s over rounds 1–20 (%s)", name, want)
		}
	}
	if strings.Contains(body, `class="note fewer"`) || strings.Contains(body, `fill="#fff"`) {
		t.Errorf("a round with fewer than both seeds:\n%s", body)
	}

	if _, err := os.Stat(site.Chromium); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found: CI must check the page in a browser", site.Chromium)
		}
		t.Skipf("%s not found (apt-get install chromium)", site.Chromium)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	shot := filepath.Join(t.ArtifactDir(), "serve-extended.png")
	img, err := site.Screenshot(ctx, filepath.Join(dir, "profile"), url, shot, 1280, 1600)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
	if err := site.Drawn(img, 1.0/1000); err != nil {
		t.Fatal(err)
	}
	plot, ok := firstPlot(img)
	if !ok {
		t.Fatal("no chart's plot area in the screenshot")
	}
	// The data are drawn 8 pixels inside the plot (screens/page's pad), round 1 at its left;
	// round 9 is 8/19 of the way to round 20.
	left := plot.Min.X + 8
	round9 := left + (plot.Dx()-16)*8/19
	for i, name := range []string{"FedAvg", "Local"} {
		c := hexColor(t, page.Palette[i])
		all := countNear(img, plot, c)
		early := countNear(img, image.Rect(plot.Min.X, plot.Min.Y, round9, plot.Max.Y), c)
		t.Logf("%s (%s): %d pixels in the plot, %d over rounds 1–9", name, page.Palette[i], all, early)
		if all < 150 || early < 20 {
			t.Errorf("%s's curve: %d pixels of its colour in the plot (want ≥ 150), %d over rounds 1–9 (want ≥ 20)", name, all, early)
		}
	}
}

// firstPlot finds the first chart's plot area in a screenshot: the topmost run of at least
// 300 pixels of screens/page's plot colour, down as far as its left column stays that colour.
func firstPlot(img image.Image) (image.Rectangle, bool) {
	bg := hexColorOf(page.PlotFill)
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x+300 < b.Max.X; x++ {
			if !near(img, x, y, bg, 4) {
				continue
			}
			x1 := x
			for x1+1 < b.Max.X && near(img, x1+1, y, bg, 4) {
				x1++
			}
			if x1-x < 300 {
				x = x1
				continue
			}
			y1 := y
			for y1+1 < b.Max.Y && near(img, x, y1+1, bg, 4) {
				y1++
			}
			return image.Rect(x, y, x1+1, y1+1), y1-y > 100
		}
	}
	return image.Rectangle{}, false
}

// countNear counts the pixels of r within 40 of colour c in every channel.
func countNear(img image.Image, r image.Rectangle, c [3]int) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if near(img, x, y, c, 40) {
				n++
			}
		}
	}
	return n
}

func near(img image.Image, x, y int, c [3]int, tol int) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	d := func(v uint32, w int) bool { return abs(int(v>>8)-w) <= tol }
	return d(r, c[0]) && d(g, c[1]) && d(b, c[2])
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func hexColor(t *testing.T, s string) [3]int {
	t.Helper()
	if len(s) != 7 || s[0] != '#' {
		t.Fatalf("colour %q", s)
	}
	return hexColorOf(s)
}

// hexColorOf parses #rrggbb.
func hexColorOf(s string) [3]int {
	var c [3]int
	for i := range c {
		v, _ := strconv.ParseUint(s[1+2*i:3+2*i], 16, 8)
		c[i] = int(v)
	}
	return c
}
