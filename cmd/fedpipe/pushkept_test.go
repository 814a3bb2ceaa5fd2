package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPushRefusesKeptOfAnotherBackend: a push into a kept-results directory whose index names
// the same cell's result made on another backend is refused (exit 2, both backends named,
// nothing copied, the index as it was); --replace-kept lets it replace the entry.
func TestPushRefusesKeptOfAnotherBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	dir := t.TempDir()
	m := writeManifest(t, dir, tinyManifest)
	kept := filepath.Join(dir, "kept")
	entry := filepath.Join(kept, "cells", "tiny", "train%20fedavg%20seed=0.json")
	cell := []string{"--only", "fedavg", "--results-only"}
	runPush := func(backend string, extra ...string) (int, string) {
		t.Helper()
		store := filepath.Join(dir, "store-"+backend)
		if code, _, errOut := fedpipe(t, "run", m, "--store", store, "--backend", backend, "--only", "fedavg", "-q"); code != 0 {
			t.Fatalf("run on %s: %s", backend, errOut)
		}
		code, _, errOut := fedpipe(t, append(append([]string{"push", m, "--store", store, "--backend", backend, "--remote", kept}, cell...), extra...)...)
		return code, errOut
	}
	if code, errOut := runPush("fpfast"); code != 0 {
		t.Fatalf("first push: exit %d %s", code, errOut)
	}
	before, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	acBefore, _ := os.ReadDir(filepath.Join(kept, "ac"))
	if len(acBefore) == 0 {
		t.Fatal("the first push wrote no result entries under ac/")
	}
	code, errOut := runPush("fpcpu")
	if code != exitInvalid || !strings.Contains(errOut, "made on fpfast") || !strings.Contains(errOut, "made on fpcpu") ||
		!strings.Contains(errOut, "--replace-kept") {
		t.Fatalf("push of another backend's result: exit %d %s; want 2 naming both backends and --replace-kept", code, errOut)
	}
	after, _ := os.ReadFile(entry)
	acAfter, _ := os.ReadDir(filepath.Join(kept, "ac"))
	if string(after) != string(before) || len(acAfter) != len(acBefore) {
		t.Errorf("a refused push changed the kept directory: index entry changed %v, %d → %d result entries",
			string(after) != string(before), len(acBefore), len(acAfter))
	}
	if code, errOut := runPush("fpcpu", "--replace-kept"); code != 0 {
		t.Fatalf("--replace-kept: exit %d %s", code, errOut)
	}
	if after, _ := os.ReadFile(entry); string(after) == string(before) || !strings.Contains(string(after), "fpcpu@") {
		t.Errorf("--replace-kept left the index entry naming the fpfast result:\n%s", after)
	}
}
