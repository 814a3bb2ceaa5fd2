package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/table"
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
	// A dry run counts what gc then removes, and removes nothing.
	code, dry, errs := fedpipe(t, "gc", m, "--store", store, "--dry-run")
	if code != 0 || !strings.Contains(dry, "would remove ") || !strings.Contains(dry, "removed nothing") {
		t.Fatalf("gc --dry-run: exit %d\n%s%s", code, dry, errs)
	}
	code, dry2, _ := fedpipe(t, "gc", m, "--store", store, "--dry-run")
	if code != 0 || dry2 != dry {
		t.Errorf("a second dry run differs (the first removed something?):\n%s\n%s", dry, dry2)
	}
	code, out, errs := fedpipe(t, "gc", m, "--store", store)
	if code != 0 || !strings.Contains(out, "removed ") {
		t.Fatalf("gc: exit %d\n%s%s", code, out, errs)
	}
	if strings.Contains(out, "removed 0 results") {
		t.Errorf("gc removed nothing although the second manifest's results are unused:\n%s", out)
	}
	// The dry run announced exactly the counts and bytes gc removed.
	counts := func(s, verb string) string {
		i := strings.Index(s, verb)
		j := strings.Index(s[i:], ")")
		if i < 0 || j < 0 {
			return ""
		}
		return s[i+len(verb) : i+j+1]
	}
	if w, g := counts(dry, "would remove "), counts(out, "removed "); w == "" || w != g {
		t.Errorf("the dry run said %q, gc removed %q", w, g)
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

func TestExportWritesArrowParquetCSV(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest)
	runJSON(t, "run", m, "--store", store)
	out := filepath.Join(dir, "out")
	code, stdout, errs := fedpipe(t, "export", m, "--store", store, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, f := range []string{"report.md", "train_fedavg_seed-0/metrics.parquet", "train_fedavg_seed-0/comm.csv",
		"evaluate_local_seed-0/summary.arrow", "partition_seed-0/assignment.csv", "report/runs.parquet"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s (%s)", f, stdout)
		}
	}
	b, _ := os.ReadFile(filepath.Join(out, "train_local_seed-0", "metrics.csv"))
	if !strings.HasPrefix(string(b), "round,client,split,loss,accuracy,samples,manifest,stage,stage_key,run,method,seed,") {
		t.Errorf("metrics.csv starts %q", string(b[:min(60, len(b))]))
	}
	if t2, err := table.ReadFile(filepath.Join(out, "evaluate_local_seed-0", "summary.arrow")); err != nil || t2.Col("accuracy_pooled") == nil {
		t.Errorf("summary.arrow: %v", err)
	}
}
