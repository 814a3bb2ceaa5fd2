package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"image/png"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
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
	// No store at all: exit 2 saying so, and none is created (issue 46).
	if code, _, errs := fedpipe(t, "report", m, "--store", store, "-o", out); code != exitInvalid || !strings.Contains(errs, "no fedpipe store found") {
		t.Errorf("without a store: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(store); err == nil {
		t.Fatalf("report created the store")
	}
	emptyStore(t, store)
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
	if !strings.HasPrefix(string(csv), "cell,method,display,round,accuracy_pct,accuracy_std_pct\n") {
		t.Errorf("accuracy-rounds.csv header: %q", strings.SplitN(string(csv), "\n", 2)[0])
	}
	// --json names what was written; --format pdf adds a PDF per figure. The same store
	// gives the same bytes, in every format.
	out3 := filepath.Join(dir, "out3")
	code, stdout, errs = fedpipe(t, "report", m, "--store", store, "-o", out3, "--json", "--format", "svg,png,pdf")
	var res struct {
		Computed int      `json:"computed"`
		Figures  []string `json:"figures"`
		HTML     string   `json:"html"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); code != exitOK || err != nil || res.Computed != 12 || len(res.Figures) != 13 ||
		res.HTML != filepath.Join(dir, "out3", "index.html") {
		t.Errorf("--json: exit %d, %+v (%v)\n%s%s", code, res, err, stdout, errs)
	}
	sameFiles(t, out, out3, "figures/*.svg")
	sameFiles(t, out, out3, "figures/*.png")
	if pdfs, _ := filepath.Glob(filepath.Join(out3, "figures", "*.pdf")); len(pdfs) != 13 {
		t.Errorf("%d PDFs, want 13", len(pdfs))
	}
	if pdfs, _ := filepath.Glob(filepath.Join(out, "figures", "*.pdf")); len(pdfs) != 0 {
		t.Errorf("PDFs written without --format pdf: %q", pdfs)
	}
	out4 := filepath.Join(dir, "out4")
	if code, stdout, errs = fedpipe(t, "report", m, "--store", store, "-o", out4, "--format", "pdf", "--latex"); code != exitOK {
		t.Fatalf("report --format pdf: exit %d\n%s%s", code, stdout, errs)
	}
	sameFiles(t, out3, out4, "figures/*.pdf")
	tex, err := os.ReadFile(filepath.Join(out4, "figures", "figures.tex"))
	if err != nil || strings.Count(string(tex), "\\includegraphics") != 13 || !strings.Contains(string(tex), "{figures/accuracy-rounds.pdf}") {
		t.Errorf("figures.tex (%v):\n%s", err, tex)
	}
	if md, _ := os.ReadFile(filepath.Join(out4, "report.md")); strings.Contains(string(md), ".svg") || !strings.Contains(string(md), "(figures/accuracy-rounds.pdf)") {
		t.Errorf("report.md of a PDF-only report links other files or not the PDFs")
	}
	if code, _, errs := fedpipe(t, "report", m, "--store", store, "-o", out4, "--format", "eps"); code != exitInvalid || !strings.Contains(errs, "eps") {
		t.Errorf("--format eps: exit %d, %q", code, errs)
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

// checkPNG checks that the PNG beside an SVG figure decodes and is twice the SVG's size
// (in CSS pixels, 96 to the inch; the SVG's is in points, 72 to the inch).
func checkPNG(t *testing.T, svgPath string) {
	t.Helper()
	svg, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		Width  string `xml:"width,attr"`
		Height string `xml:"height,attr"`
	}
	if err := xml.Unmarshal(svg, &root); err != nil {
		t.Fatalf("%s: %v", svgPath, err)
	}
	px := func(pt string) int {
		v, err := strconv.ParseFloat(strings.TrimSuffix(pt, "pt"), 64)
		if err != nil {
			t.Fatalf("%s: size %q", svgPath, pt)
		}
		return int(math.Round(2 * v / 72 * 96))
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
	if got := img.Bounds().Size(); got.X != px(root.Width) || got.Y != px(root.Height) {
		t.Errorf("%s is %v, want twice the SVG's %s×%s", pngPath, got, root.Width, root.Height)
	}
}

// sameFiles checks that the files matching pattern in dir a have the same bytes in dir b.
func sameFiles(t *testing.T, a, b, pattern string) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(a, pattern))
	if len(paths) == 0 {
		t.Errorf("no %s in %s", pattern, a)
	}
	for _, p := range paths {
		x, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, strings.TrimPrefix(p, a)))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two reports of the same store (%v)", strings.TrimPrefix(p, a), err)
		}
	}
}
