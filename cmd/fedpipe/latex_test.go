package main

import (
	"os"
	"path/filepath"
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
	for _, want := range []string{"\\toprule", "\\midrule", "\\bottomrule", "Method & lr=0.05 & lr=0.5 \\\\", "$\\pm$", "\\textbf{", "(\\%)", "population std",
		"fedavg & ", "& -- \\\\"} {
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

// The accuracy curves have a band over seeds, and the figures of one report share their
// y range (issue 18).
func TestReportCurvesBandAndSharedRange(t *testing.T) {
	dir := t.TempDir()
	store, out := filepath.Join(dir, "store"), filepath.Join(dir, "out")
	m := writeManifest(t, dir, tinyManifest)
	sets := []string{"-S", "grid.train.lr=[0.05,0.5]", "-S", "seeds=[0,1]"}
	runJSON(t, append([]string{"run", m, "--store", store}, sets...)...)
	if code, stdout, errs := fedpipe(t, append([]string{"report", m, "--store", store, "-o", out}, sets...)...); code != exitOK {
		t.Fatalf("report: %d\n%s%s", code, stdout, errs)
	}
	var ticks []string
	for _, f := range []string{"accuracy-rounds-lr_0.05.svg", "accuracy-rounds-lr_0.5.svg"} {
		b, err := os.ReadFile(filepath.Join(out, "figures", f))
		if err != nil {
			t.Fatal(err)
		}
		svg := string(b)
		if !strings.Contains(svg, `class="band"`) {
			t.Errorf("%s has no band over seeds", f)
		}
		i := strings.Index(svg, `<g class="ticks"`)
		end := strings.Index(svg[i:], "</g>")
		// The y tick labels are the text-anchor="end" ones.
		var ys []string
		for _, part := range strings.Split(svg[i:i+end], `text-anchor="end">`)[1:] {
			ys = append(ys, part[:strings.Index(part, "<")])
		}
		ticks = append(ticks, strings.Join(ys, ","))
	}
	if ticks[0] != ticks[1] || ticks[0] == "" {
		t.Errorf("y ticks differ between the figures: %q vs %q", ticks[0], ticks[1])
	}
}
