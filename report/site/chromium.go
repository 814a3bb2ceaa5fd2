package site

import (
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
)

// Chromium is where Debian's chromium package puts the browser (.ci/run installs it); the
// tests that look at pages through it skip without it.
const Chromium = "/usr/bin/chromium"

// headless runs Chromium without a window, a sandbox, a GPU or any network of its own
// (no updates, sync or QUIC), with a fresh profile in profile, on the arguments given.
func headless(ctx context.Context, profile string, args ...string) ([]byte, error) {
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profile}
	out, err := exec.CommandContext(ctx, Chromium, append(base, args...)...).Output()
	if err != nil {
		return out, fmt.Errorf("chromium: %w", err)
	}
	return out, nil
}

// Screenshot loads url in headless Chromium in a window of w×h pixels and writes what it
// shows to the PNG file shot, returning the decoded image. profile is a scratch folder.
func Screenshot(ctx context.Context, profile, url, shot string, w, h int) (image.Image, error) {
	if err := os.MkdirAll(filepath.Dir(shot), 0o755); err != nil {
		return nil, err
	}
	if _, err := headless(ctx, profile, "--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", w, h), url); err != nil {
		return nil, err
	}
	f, err := os.Open(shot)
	if err != nil {
		return nil, fmt.Errorf("no screenshot: %w", err)
	}
	defer f.Close()
	return png.Decode(f)
}

// DumpDOM loads url in headless Chromium and returns the page's DOM as serialized after
// it loaded (its scripts having run).
func DumpDOM(ctx context.Context, profile, url string) (string, error) {
	out, err := headless(ctx, profile, "--dump-dom", url)
	return string(out), err
}

// Drawn checks that a screenshot shows something: its luminance varies (a blank,
// one-colour page does not), and dark pixels (text, lines) are at least minDark of it, not
// a stray few. It samples every second pixel of every second row.
func Drawn(img image.Image, minDark float64) error {
	var sum, sq float64
	n, dark := 0, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			l := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 65535
			sum += l
			sq += l * l
			n++
			if r+g+bl < 3*0x4000 {
				dark++
			}
		}
	}
	if n == 0 {
		return fmt.Errorf("screenshot is empty")
	}
	m := sum / float64(n)
	if v := sq/float64(n) - m*m; v < 1e-3 {
		return fmt.Errorf("screenshot looks blank: luminance variance %.2g", v)
	}
	if float64(dark) < minDark*float64(n) {
		return fmt.Errorf("only %d of %d sampled pixels are dark: is anything drawn?", dark, n)
	}
	return nil
}
