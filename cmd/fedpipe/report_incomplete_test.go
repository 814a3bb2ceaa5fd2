package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fedpipe/fedpipe/report/folder"
)

// A report's folder says it is incomplete until its last file is written: a report that
// fails midway (here its tables folder cannot be created) leaves the INCOMPLETE file; a
// whole report removes it.
func TestReportMarksItsFolderIncompleteUntilDone(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	dir := t.TempDir()
	m := writeManifest(t, dir, tinyManifest)
	store := filepath.Join(dir, "store")
	if code, _, errOut := fedpipe(t, "run", m, "--store", store, "-q"); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	broken := filepath.Join(dir, "broken")
	if err := os.MkdirAll(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "tables"), nil, 0o644); err != nil { // a file where a folder must go
		t.Fatal(err)
	}
	if code, _, errOut := fedpipe(t, "report", m, "--store", store, "--out", broken); code == 0 {
		t.Fatalf("a report whose tables folder cannot be made succeeded: %s", errOut)
	}
	if _, err := os.Stat(filepath.Join(broken, folder.IncompleteMarker)); err != nil {
		t.Errorf("the failed report left no %s: %v", folder.IncompleteMarker, err)
	}
	whole := filepath.Join(dir, "whole")
	if code, _, errOut := fedpipe(t, "report", m, "--store", store, "--out", whole); code != 0 {
		t.Fatalf("report: %s", errOut)
	}
	if _, err := os.Stat(filepath.Join(whole, folder.IncompleteMarker)); !os.IsNotExist(err) {
		t.Errorf("a whole report kept %s (%v)", folder.IncompleteMarker, err)
	}
	if _, err := os.Stat(filepath.Join(whole, "index.html")); err != nil {
		t.Error(err)
	}
}
