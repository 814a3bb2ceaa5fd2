package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 18, bug 1: two manifests sharing a name (a copied YAML) are two sets of runs, kept
// apart by content, never averaged as if they were seeds; the clash is reported.
func TestReportKeepsManifestsWithOneNameApart(t *testing.T) {
	dir := t.TempDir()
	store, out := filepath.Join(dir, "store"), filepath.Join(dir, "out")
	var paths []string
	for _, v := range []struct{ sub, lr string }{{"a", "0.05"}, {"b", "0.2"}} {
		sub := filepath.Join(dir, v.sub)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		body := strings.Replace(tinyManifest, "lr: 0.05, eval_every", "lr: "+v.lr+", eval_every", 1)
		m := writeManifest(t, sub, body)
		if code, stdout, errs := fedpipe(t, "run", m, "--store", store, "--quiet"); code != exitOK {
			t.Fatalf("run %s: exit %d\n%s%s", v.sub, code, stdout, errs)
		}
		paths = append(paths, m)
	}
	code, stdout, errs := fedpipe(t, append([]string{"report", "--store", store, "-o", out}, paths...)...)
	if code != exitOK || !strings.Contains(stdout, "4 of 4 runs computed") {
		t.Fatalf("report: exit %d\n%s%s", code, stdout, errs)
	}
	if !strings.Contains(errs, `share the name "tiny"`) {
		t.Errorf("the name clash is not reported:\n%s", errs)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md), "n=2") {
		t.Errorf("runs of two manifests averaged as seeds:\n%s", md)
	}
	runs, err := os.ReadFile(filepath.Join(out, "tables", "runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(runs)), "\n")
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		if seen[l] {
			t.Errorf("runs.csv has a duplicate row %q", l)
		}
		seen[l] = true
	}
	if len(lines) != 1+4 {
		t.Errorf("runs.csv: want 4 rows, got\n%s", runs)
	}
}
