package site

import (
	"context"
	"os"
	"path/filepath"
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
}
