package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/report/site"
)

// Several cells of two seeds each, long enough to watch grow.
const serveManifest = `name: serve
seeds: [0, 1]
dataset: {name: synthetic, alpha: 0.5, beta: 0.5, devices: 20}
partition: {scheme: natural}
model: {arch: logreg}
train: {rounds: 200, participation: 0.5, local_epochs: 1, batch_size: 16, lr: 0.05, eval_every: 20, checkpoint_every: 50}
methods:
  - name: fedavg
  - name: local
expect:
  - {method: fedavg, metric: final_client_mean, published: 60, std: 1, tolerance: 100, source: "a reference line for the test"}
`

// startServe starts `fedpipe serve` in another process on a free port of the loopback and
// returns the page's address.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	cmd := subprocess(append([]string{"serve"}, append(args, "--addr", "127.0.0.1:0", "--refresh", "300ms")...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no address: %v", err)
	}
	go io.Copy(io.Discard, out)
	f := strings.Fields(line)
	if len(f) < 3 || !strings.HasPrefix(f[2], "http://127.0.0.1:") {
		t.Fatalf("serve's first line: %q", line)
	}
	return f[2]
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var pointsAttr = regexp.MustCompile(`data-points="(\d+)"`)

// pageState sums a page's curve points and counts its cells and runs by state.
func pageState(page string) (points, cells, finishedCells, training, finished int) {
	for _, m := range pointsAttr.FindAllStringSubmatch(page, -1) {
		n, _ := strconv.Atoi(m[1])
		points += n
		cells++
	}
	return points, cells, strings.Count(page, `data-finished="true"`), strings.Count(page, `data-state="training"`), strings.Count(page, `data-state="finished"`)
}

// The page of a sweep in another process: read-only, nothing loaded from elsewhere, its
// curves gaining points while the runs train and every cell finished at the end, in headless
// Chromium where it is installed (a screenshot in the test's artifact folder), else as
// served.
func TestServeShowsCurvesGrow(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, serveManifest)
	url := startServe(t, m, "--store", store)

	code, page := get(t, url)
	if code != http.StatusOK || !strings.Contains(page, "<script>") || strings.Count(page, "data-state=\"waiting\"") != 4 {
		t.Fatalf("page before the run: %d\n%s", code, page)
	}
	for _, ext := range []string{`src="http`, `href="http`, `src="//`, `@import`, `url(http`} {
		if strings.Contains(page, ext) {
			t.Fatalf("the page loads %s…: it must need nothing from elsewhere", ext)
		}
	}
	resp, err := http.Post(url, "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d, want 405", resp.StatusCode)
	}

	browser := true
	if _, err := os.Stat(site.Chromium); err != nil {
		t.Logf("%s not found (apt-get install chromium): checking the page as served", site.Chromium)
		browser = false
	}
	profile := filepath.Join(dir, "profile")
	look := func() string {
		if !browser {
			_, page := get(t, url)
			return page
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		page, err := site.DumpDOM(ctx, profile, url)
		if err != nil {
			t.Fatal(err)
		}
		return page
	}
	poll := func(what string, ok func(points, cells, finishedCells, training, finished int) bool) int {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			page := look()
			p, c, fc, tr, fi := pageState(page)
			if ok(p, c, fc, tr, fi) {
				return p
			}
			if time.Now().After(deadline) {
				t.Fatalf("the page never showed %s (points %d, cells %d, finished cells %d, training %d, finished %d)", what, p, c, fc, tr, fi)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}

	run := subprocess("run", m, "--store", store, "-q")
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer run.Process.Kill()
	first := poll("a run training with points", func(p, c, _, tr, _ int) bool { return p > 0 && tr == 1 && c == 2 })
	poll("the curves gain points", func(p, _, _, _, _ int) bool { return p > first })
	if err := run.Wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	poll("every run finished", func(p, c, fc, tr, fi int) bool { return fi == 4 && fc == 2 && tr == 0 && p == 4*200 })
	_, page = get(t, url)
	if !strings.Contains(page, "published") && !strings.Contains(page, "data:image/svg+xml") {
		t.Fatalf("finished page without charts:\n%s", page)
	}
	if !browser {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	shot := filepath.Join(t.ArtifactDir(), "serve.png")
	img, err := site.Screenshot(ctx, profile, url, shot, 1280, 1600)
	if err != nil {
		t.Fatal(err)
	}
	if err := site.Drawn(img, 1.0/1000); err != nil { // a page of text and thin lines on white
		t.Fatal(err)
	}
	t.Logf("screenshot of the finished page: %s", shot)
}
