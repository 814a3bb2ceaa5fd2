package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
)

// fsck --repair deletes the corrupt output and the action that names it, exits 0, and
// leaves a store that fsck passes; the next run recomputes only what was lost.
func TestFsckRepair(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest)
	first := runJSON(t, "run", m, "--store", store)
	d, _ := artifacts.ParseDigest(first.Stages[len(first.Stages)-1].Outputs["report.md"])
	if err := artifacts.FlipByte(store, d, 3); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := fedpipe(t, "fsck", "--store", store); code != 1 {
		t.Fatalf("fsck: exit %d\n%s", code, out)
	}
	code, out, errs := fedpipe(t, "fsck", "--repair", "--store", store)
	if code != 0 || !strings.Contains(out, "deleted 1 corrupt blobs") || !strings.Contains(out, "1 broken actions") {
		t.Fatalf("fsck --repair: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := fedpipe(t, "fsck", "--store", store); code != 0 {
		t.Fatalf("fsck after repair: exit %d\n%s", code, out)
	}
	again := runJSON(t, "run", m, "--store", store)
	for _, s := range again.Stages {
		if want := map[bool]string{true: "ran", false: "cached"}[s.Kind == "report"]; s.State != want {
			t.Errorf("%s: %s, want %s", s.Name, s.State, want)
		}
	}
}

// A flipped byte in the value log's header makes the store unopenable ("Invalid datakey
// id"); fsck --salvage recovers every result, so the next run computes nothing.
func TestFsckSalvage(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest)
	runJSON(t, "run", m, "--store", store)
	vlog := filepath.Join(store, "000001.vlog")
	raw, err := os.ReadFile(vlog)
	if err != nil {
		t.Fatal(err)
	}
	raw[2] ^= 0x10
	if err := os.WriteFile(vlog, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := fedpipe(t, "fsck", "--store", store)
	if code != 1 || !strings.Contains(errs, "Invalid datakey id") || !strings.Contains(errs, "fsck --salvage") {
		t.Fatalf("fsck on the damaged store: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = fedpipe(t, "fsck", "--salvage", "--store", store)
	if code != 0 || !strings.Contains(out, "lost 0 blobs, 0 actions") || !strings.Contains(out, "header") {
		t.Fatalf("fsck --salvage: exit %d\n%s%s", code, out, errs)
	}
	if damaged, _ := filepath.Glob(store + ".damaged-*"); len(damaged) != 1 {
		t.Errorf("damaged store kept as %v", damaged)
	}
	again := runJSON(t, "run", m, "--store", store)
	for _, s := range again.Stages {
		if s.State != "cached" {
			t.Errorf("after salvage %s %s", s.Name, s.State)
		}
	}
	if code, out, _ := fedpipe(t, "fsck", "--store", store); code != 0 {
		t.Errorf("fsck after salvage: exit %d\n%s", code, out)
	}
}
