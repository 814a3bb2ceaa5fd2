package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	store, out := filepath.Join(dir, "store"), filepath.Join(dir, "out")
	m := filepath.Join("..", "..", "report", "site", "testdata", "tiny.yaml")
	if code, _, errs := fedpipe(t, "report", m); code != exitInvalid || !strings.Contains(errs, "--out") {
		t.Errorf("without --out: exit %d, %q", code, errs)
	}
	// Before running: a page whose cells say not computed, and no figures.
	code, stdout, errs := fedpipe(t, "report", m, "--store", store, "-o", out)
	if code != exitOK || !strings.Contains(stdout, "0 of 12 runs computed, 0 figures") {
		t.Fatalf("before running: exit %d\n%s%s", code, stdout, errs)
	}
	if md, _ := os.ReadFile(filepath.Join(out, "report.md")); !strings.Contains(string(md), "not computed") {
		t.Errorf("report.md before running:\n%s", md)
	}
	if code, stdout, errs = fedpipe(t, "run", m, "--store", store, "--quiet"); code != exitOK {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, errs)
	}
	out = filepath.Join(dir, "out2")
	if code, stdout, errs = fedpipe(t, "report", m, "--store", store, "--out", out); code != exitOK || !strings.Contains(stdout, "12 of 12 runs computed") {
		t.Fatalf("report: exit %d\n%s%s", code, stdout, errs)
	}
	for _, f := range []string{"index.html", "report.md", "figures/accuracy-rounds.svg", "figures/score-quantile.svg",
		"figures/selection-fedselect.svg", "figures/mask-iou-fedselect.svg", "figures/shift-degree.svg",
		"tables/results.csv", "tables/runs.parquet", "tables/accuracy-rounds.csv", "tables/accuracy-rounds.parquet",
		"data/train_fedselect_seed-0/mask_iou.parquet", "data/train_fedselect_seed-0/selection.csv",
		"data/shift_fedavg_seed-1/summary.parquet", "data/report.md"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// Every figure's SVG has a PNG beside it, twice its size, for slides; no file is left
	// half-written (a .tmp) anywhere.
	svgs, _ := filepath.Glob(filepath.Join(out, "figures", "*.svg"))
	if len(svgs) != 13 {
		t.Errorf("%d SVGs, want 13", len(svgs))
	}
	for _, svg := range svgs {
		checkPNG(t, svg)
	}
	filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if strings.HasSuffix(path, ".tmp") {
			t.Errorf("%s left behind", path)
		}
		return err
	})
	// The Parquet and CSV files are readable tables: export's encoders, same rows.
	csv, err := os.ReadFile(filepath.Join(out, "tables", "accuracy-rounds.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(csv), "\n"); lines != 1+24 {
		t.Errorf("accuracy-rounds.csv has %d lines, want a header and 24 rows:\n%s", lines, csv)
	}
	if !strings.HasPrefix(string(csv), "cell,method,round,accuracy_pct,accuracy_std_pct\n") {
		t.Errorf("accuracy-rounds.csv header: %q", strings.SplitN(string(csv), "\n", 2)[0])
	}
	// --json names what was written.
	code, stdout, errs = fedpipe(t, "report", m, "--store", store, "-o", filepath.Join(dir, "out3"), "--json")
	var res struct {
		Computed int      `json:"computed"`
		Figures  []string `json:"figures"`
		HTML     string   `json:"html"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); code != exitOK || err != nil || res.Computed != 12 || len(res.Figures) != 13 ||
		res.HTML != filepath.Join(dir, "out3", "index.html") {
		t.Errorf("--json: exit %d, %+v (%v)\n%s%s", code, res, err, stdout, errs)
	}
	pq, err := os.ReadFile(filepath.Join(out, "tables", "results.parquet"))
	if err != nil || !strings.HasPrefix(string(pq), "PAR1") {
		t.Errorf("results.parquet is not Parquet (%v)", err)
	}
}

// Several manifests: one page, each manifest's stage tables under data/<manifest name>/.
func TestReportOfSeveralManifests(t *testing.T) {
	dir := t.TempDir()
	store, out := filepath.Join(dir, "store"), filepath.Join(dir, "out")
	var paths []string
	for _, name := range []string{"tbl-a", "tbl-b"} {
		sub := filepath.Join(dir, name)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		m := writeManifest(t, sub, strings.Replace(tinyManifest, "name: tiny", "name: "+name, 1))
		if code, stdout, errs := fedpipe(t, "run", m, "--store", store, "--quiet"); code != exitOK {
			t.Fatalf("run %s: exit %d\n%s%s", name, code, stdout, errs)
		}
		paths = append(paths, m)
	}
	code, stdout, errs := fedpipe(t, append([]string{"report", "--store", store, "-o", out}, paths...)...)
	if code != exitOK || !strings.Contains(stdout, "4 of 4 runs computed") {
		t.Fatalf("report: exit %d\n%s%s", code, stdout, errs)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !strings.HasPrefix(string(md), "# tbl\n") || !strings.Contains(string(md), "| method | a | b |") {
		t.Errorf("report.md (%v):\n%s", err, md)
	}
	for _, f := range []string{"data/tbl-a/train_fedavg_seed-0/metrics.csv", "data/tbl-b/train_local_seed-0/metrics.parquet"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// checkPNG checks that the PNG beside an SVG figure decodes and is twice the SVG's size.
func checkPNG(t *testing.T, svgPath string) {
	t.Helper()
	svg, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		Width  int `xml:"width,attr"`
		Height int `xml:"height,attr"`
	}
	if err := xml.Unmarshal(svg, &root); err != nil {
		t.Fatalf("%s: %v", svgPath, err)
	}
	pngPath := strings.TrimSuffix(svgPath, ".svg") + ".png"
	b, err := os.ReadFile(pngPath)
	if err != nil {
		t.Fatalf("no PNG beside %s: %v", svgPath, err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", pngPath, err)
	}
	if got := img.Bounds().Size(); got.X != 2*root.Width || got.Y != 2*root.Height {
		t.Errorf("%s is %v, want twice the SVG's %d×%d", pngPath, got, root.Width, root.Height)
	}
}
