package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
)

func TestFsckFindsCorruptionAndGCKeepsWhatManifestsUse(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest)
	first := runJSON(t, "run", m, "--store", store)
	if code, out, _ := fedpipe(t, "fsck", "--store", store); code != 0 || !strings.Contains(out, "(0 corrupt)") {
		t.Fatalf("fsck on a healthy store: exit %d\n%s", code, out)
	}
	// A variant whose results gc will drop: local's lr changes, so its train and evaluate
	// stages and the report are new results nothing else uses.
	writeManifest(t, dir, strings.Replace(tinyManifest, "train: {lr: 0.05}", "train: {lr: 0.02}", 1))
	runJSON(t, "run", m, "--store", store)
	writeManifest(t, dir, tinyManifest) // back to the first manifest

	if code, _, errs := fedpipe(t, "gc", "--store", store); code != 2 || !strings.Contains(errs, "refusing to delete everything") {
		t.Errorf("gc with nothing to keep: exit %d, %s", code, errs)
	}
	code, out, errs := fedpipe(t, "gc", m, "--store", store)
	if code != 0 || !strings.Contains(out, "removed ") {
		t.Fatalf("gc: exit %d\n%s%s", code, out, errs)
	}
	if strings.Contains(out, "removed 0 results") {
		t.Errorf("gc removed nothing although the second manifest's results are unused:\n%s", out)
	}
	again := runJSON(t, "run", m, "--store", store)
	for _, s := range again.Stages {
		if s.State != "cached" {
			t.Errorf("after gc, %s of the kept manifest is %s", s.Name, s.State)
		}
	}
	// Corrupt one output: fsck reports it and exits 1.
	d, _ := artifacts.ParseDigest(first.Stages[len(first.Stages)-1].Outputs["report.md"])
	if err := artifacts.FlipByte(store, d, 3); err != nil {
		t.Fatal(err)
	}
	code, out, _ = fedpipe(t, "fsck", "--store", store)
	if code != 1 || !strings.Contains(out, d.String()) || !strings.Contains(out, "(1 corrupt)") {
		t.Errorf("fsck after corruption: exit %d\n%s", code, out)
	}
}
