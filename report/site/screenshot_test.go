package site

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium is where Debian's chromium package puts the browser (.ci/run installs it).
const chromium = "/usr/bin/chromium"

// TestScreenshot renders the page of a tiny run in headless Chromium and checks that the
// screenshot has the window's size and is not blank.
func TestScreenshot(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("%s not found (apt-get install chromium): %v", chromium, err)
	}
	_, g, store := tinyRun(t)
	s, err := Build(store, g)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "index.html")
	if err := os.WriteFile(page, []byte(s.HTML), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile")}
	cmd := exec.CommandContext(ctx, chromium, append(flags, "--screenshot="+shot, "--window-size=1280,2000", "file://"+page)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 2000 {
		t.Fatalf("screenshot is %d×%d, want the window's 1280×2000", b.Dx(), b.Dy())
	}
	// Variance of the luminance: a blank (one-colour) page has none.
	var sum, sq float64
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			l := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 65535
			sum += l
			sq += l * l
			n++
		}
	}
	m := sum / float64(n)
	if v := sq/float64(n) - m*m; v < 1e-3 {
		t.Errorf("screenshot looks blank: luminance variance %.2g", v)
	}
	// Dark pixels (text, lines) must be a visible part of the page, not a stray few.
	dark := 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r+g+bl < 3*0x4000 {
				dark++
			}
		}
	}
	if dark < n/200 {
		t.Errorf("only %d of %d sampled pixels are dark: is anything drawn?", dark, n)
	}
	// The page as the browser parsed it: each results column's best mean in bold, intervals
	// over seeds (the tiny run has two), and the footnote naming the test behind the marks.
	dom, err := exec.CommandContext(ctx, chromium, append(flags, "--dump-dom", "file://"+page)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	if !regexp.MustCompile(`<strong>[0-9]+\.[0-9]{2}</strong> ± `).Match(dom) {
		t.Error("the rendered page sets no mean in bold")
	}
	for _, want := range []string{"(n=2) [", "] over seeds", "exact sign-flip permutation test", "Holm-corrected"} {
		if !strings.Contains(string(dom), want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
}
