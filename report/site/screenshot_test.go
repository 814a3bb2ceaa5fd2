package site

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestScreenshot renders the page of a tiny run in headless Chromium and checks that the
// screenshot has the window's size and is not blank.
func TestScreenshot(t *testing.T) {
	if _, err := os.Stat(Chromium); err != nil {
		t.Skipf("%s not found (apt-get install chromium): %v", Chromium, err)
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
	img, err := Screenshot(ctx, filepath.Join(dir, "profile"), "file://"+page, shot, 1280, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 2000 {
		t.Fatalf("screenshot is %d×%d, want the window's 1280×2000", b.Dx(), b.Dy())
	}
	if err := Drawn(img, 1.0/200); err != nil {
		t.Error(err)
	}
	// The page as the browser parsed it: each results column's best mean in bold, intervals
	// over seeds (the tiny run has two), and the footnote naming the test behind the marks.
	dom, err := DumpDOM(ctx, filepath.Join(dir, "profile"), "file://"+page)
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	if !regexp.MustCompile(`<strong>[0-9]+\.[0-9]{2}</strong> ± `).MatchString(dom) {
		t.Error("the rendered page sets no mean in bold")
	}
	for _, want := range []string{"(n=2) [", "] over seeds", "exact sign-flip permutation test", "Holm-corrected"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
}
