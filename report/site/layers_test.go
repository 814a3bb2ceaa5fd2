package site

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportImportsNoStage keeps `fedpipe report` (and verify, which it embeds) a reader of
// stored results: no package it links, however indirectly, lies under stages/ (the
// summaries it shares with the stages live in results/summary).
func TestReportImportsNoStage(t *testing.T) {
	const module = "github.com/fedpipe/fedpipe"
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{} // package → a package that imports it
	queue := []string{module + "/report/site", module + "/report/chart", module + "/verify"}
	for _, p := range queue {
		seen[p] = "(start)"
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if rel, ok := strings.CutPrefix(p, module+"/stages"); ok && (rel == "" || rel[0] == '/') {
			t.Errorf("%s imports %s: report must read stored results only", seen[p], p)
			continue
		}
		pkg, err := build.Default.ImportDir(filepath.Join(root, strings.TrimPrefix(p, module+"/")), 0)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, module+"/") && seen[imp] == "" {
				seen[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	if len(seen) < 5 {
		t.Fatalf("walked only %d packages; the walk is broken", len(seen))
	}
}
