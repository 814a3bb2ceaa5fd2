package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// report --latex writes the results as a booktabs table: best per column in bold, mean ±
// std, not computed as "--", LaTeX's special characters escaped.
func TestReportLatex(t *testing.T) {
	dir := t.TempDir()
	store, out := filepath.Join(dir, "store"), filepath.Join(dir, "out")
	m := writeManifest(t, dir, tinyManifest)
	runJSON(t, "run", m, "--store", store)
	code, stdout, errs := fedpipe(t, "report", m, "--store", store, "-o", out, "--latex", "-S", "grid.train.lr=[0.05,0.5]")
	if code != exitOK {
		t.Fatalf("report --latex: exit %d\n%s%s", code, stdout, errs)
	}
	b, err := os.ReadFile(filepath.Join(out, "tables", "results.tex"))
	if err != nil {
		t.Fatal(err)
	}
	tex := string(b)
	// One name per method: the CSV keeps the label and adds the display name beside it.
	if csv, err := os.ReadFile(filepath.Join(out, "tables", "results.csv")); err != nil || !strings.HasPrefix(string(csv), "method,display,cell,") ||
		!strings.Contains(string(csv), "fedavg,FedAvg,") {
		t.Errorf("results.csv lacks the display column beside method (%v):\n%s", err, csv)
	}
	for _, want := range []string{"\\toprule", "\\midrule", "\\bottomrule", "Method & lr=0.05 & lr=0.5 \\\\", "$\\pm$", "\\textbf{", "(\\%)", "population standard deviation", "\\label{tab:tiny}\n",
		"FedAvg & ", "& -- \\\\"} {
		if !strings.Contains(tex, want) {
			t.Errorf("results.tex lacks %q:\n%s", want, tex)
		}
	}
	for _, line := range strings.Split(tex, "\n") {
		if !strings.HasPrefix(line, "%") && strings.Contains(strings.ReplaceAll(line, "\\%", ""), "%") {
			t.Errorf("an unescaped %% comments out the rest of %q", line)
		}
	}
	if got := strings.Count(tex, "\\textbf{"); got != 1 {
		t.Errorf("%d bold cells, want one (the lr=0.05 column's best; lr=0.5 is not computed):\n%s", got, tex)
	}
}

// The accuracy curves have a band over seeds, and the grid's cells are the panels of one
// figure sharing their y range (issues 18 and 46).
func TestReportCurvesBandAndSharedRange(t *testing.T) {
	dir := t.TempDir()
	store, out := filepath.Join(dir, "store"), filepath.Join(dir, "out")
	m := writeManifest(t, dir, tinyManifest)
	sets := []string{"-S", "grid.train.lr=[0.05,0.5]", "-S", "seeds=[0,1]"}
	runJSON(t, append([]string{"run", m, "--store", store}, sets...)...)
	if code, stdout, errs := fedpipe(t, append([]string{"report", m, "--store", store, "-o", out}, sets...)...); code != exitOK {
		t.Fatalf("report: %d\n%s%s", code, stdout, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "figures", "accuracy-rounds-lr_0.05.svg")); err == nil {
		t.Errorf("a figure per grid cell beside the combined one")
	}
	b, err := os.ReadFile(filepath.Join(out, "figures", "accuracy-rounds.svg"))
	if err != nil {
		t.Fatal(err)
	}
	// The band is a translucent fill; the panels' numbers (x and y tick labels, panel by
	// panel) are the same.
	svg := string(b)
	if !strings.Contains(svg, "fill-opacity:") {
		t.Errorf("accuracy-rounds has no band over seeds")
	}
	var ts []string
	for _, part := range strings.Split(svg, "<text")[1:] {
		text := part[strings.Index(part, ">")+1 : strings.Index(part, "</text>")]
		if _, err := strconv.ParseFloat(text, 64); err == nil {
			ts = append(ts, text)
		}
	}
	half := len(ts) / 2
	if len(ts)%2 != 0 || half < 5 || strings.Join(ts[:half], ",") != strings.Join(ts[half:], ",") {
		t.Errorf("the two panels' tick labels differ: %q", ts)
	}
	for _, cell := range []string{"lr=0.05", "lr=0.5"} {
		if !strings.Contains(svg, ">"+cell+"</text>") {
			t.Errorf("no panel labelled %s", cell)
		}
	}
}
