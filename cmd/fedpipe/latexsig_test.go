package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A multi-seed report's LaTeX table shows mean ± std (n), the best in bold, a dagger on the
// methods not significantly different from it where the test could tell (never with four seeds), and a caption naming the test and the unit
// (--compare-over); an unknown unit is invalid input.
func TestReportLatexSignificance(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	body := strings.Replace(tinyManifest, "seeds: [0]", "seeds: [0, 1, 2, 3]", 1) + "  - name: fedprox\n"
	m := writeManifest(t, dir, body)
	runJSON(t, "run", m, "--store", store)
	for _, unit := range []string{"seeds", "clients"} {
		out := filepath.Join(dir, "out-"+unit)
		if code, stdout, errs := fedpipe(t, "report", m, "--store", store, "-o", out, "--latex", "--compare-over", unit); code != exitOK {
			t.Fatalf("report: exit %d\n%s%s", code, stdout, errs)
		}
		b, err := os.ReadFile(filepath.Join(out, "tables", "results.tex"))
		if err != nil {
			t.Fatal(err)
		}
		tex := string(b)
		if strings.Count(tex, "\\textbf{") != 1 || !strings.Contains(tex, " (4)") || !strings.Contains(tex, "Holm-corrected") {
			t.Errorf("%s: results.tex:\n%s", unit, tex)
		}
		// Four seeds: no sign-flip p can be below 2/2⁴, so no dagger could say anything: the
		// methods get the mark of "no test possible" (it once marked every method "not
		// significantly different"), which the caption explains, naming the test.
		if unit == "seeds" && (strings.Contains(tex, "dagger") || !strings.Contains(tex, "exact sign-flip permutation test paired by seed") ||
			!strings.Contains(tex, "(4)$^\\circ$ \\\\") || !strings.Contains(tex, "$^\\circ$: no test possible")) {
			t.Errorf("seeds: want no method marked, and the caption to say why:\n%s", tex)
		}
		if unit == "clients" && !strings.Contains(tex, "Wilcoxon signed-rank") {
			t.Errorf("clients: caption:\n%s", tex)
		}
		md, err := os.ReadFile(filepath.Join(out, "report.md"))
		if err != nil || !strings.Contains(string(md), "over seeds") || !strings.Contains(string(md), "Holm-corrected") {
			t.Errorf("%s: report.md lacks the intervals or the footnote (%v)", unit, err)
		}
	}
	if code, _, errs := fedpipe(t, "report", m, "--store", store, "-o", filepath.Join(dir, "x"), "--compare-over", "runs"); code != exitInvalid || !strings.Contains(errs, "want seeds or clients") {
		t.Errorf("--compare-over runs: exit %d %s", code, errs)
	}
}
