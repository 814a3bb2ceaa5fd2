package latex

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needTeX skips the test without pdflatex and pdftotext, unless FEDPIPE_REQUIRE_TEX is set
// (`make latex-check`, which installs them first), where their absence fails it.
func needTeX(t *testing.T) {
	for _, tool := range []string{"pdflatex", "pdftotext"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("FEDPIPE_REQUIRE_TEX") != "" {
				t.Fatalf("%s not found, and FEDPIPE_REQUIRE_TEX is set", tool)
			}
			t.Skipf("%s not installed (apt-get install texlive-latex-base texlive-latex-recommended poppler-utils; make latex-check)", tool)
		}
	}
}

// The results table compiles as it is inside a minimal document that loads booktabs alone,
// and the PDF's text has the caption's words without the manifest's name, its numbers,
// the dagger note only where a cell has a dagger, and the reference to its label resolved.
func TestResultsCompilesWithPdflatex(t *testing.T) {
	needTeX(t)
	tex, err := Results(results(true), "quickstart")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "results.tex"), []byte(tex), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\nSee Table~\\ref{tab:quickstart}.\n\\input{results.tex}\n\\end{document}\n"
	if err := os.WriteFile(filepath.Join(dir, "doc.tex"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second pass resolves \ref
		cmd := exec.Command("pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pdflatex: %v\n%s", err, out)
		}
	}
	log, _ := os.ReadFile(filepath.Join(dir, "doc.log"))
	if strings.Contains(string(log), "Warning") {
		t.Errorf("pdflatex warned:\n%s", log)
	}
	out, err := exec.Command("pdftotext", "-layout", filepath.Join(dir, "doc.pdf"), "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(out)), " ")
	for _, want := range []string{"See Table 1.", "Table 1: Final test accuracy, mean over clients (%)", "85.50 ± 0.25 (3)", "70.00 (1) [65.50, 74.25]",
		"not significantly different from the best", "one seed, the run’s 95% test-set interval"} {
		if !strings.Contains(text, want) {
			t.Errorf("the PDF's text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "quickstart") || strings.Contains(text, "no test possible") {
		t.Errorf("the PDF names the manifest or explains an unused mark:\n%s", text)
	}
}
