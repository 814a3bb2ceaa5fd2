package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A claim and its mirror image read as mirror images (holds and reversed, or undecided
// both) in verify and in the report, on one seed tested over the run's clients; claims
// change no exit code.
func TestVerifyAndReportGiveClaimsVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest+"expect:\n  - {method: local, metric: final_pooled, published: 50, tolerance: 1000}\n"+
		"claims:\n  - {kind: above, method: local, than: [fedavg], metric: final_pooled, source: \"test, text\"}\n"+
		"  - {kind: above, method: fedavg, than: [local], metric: final_pooled, source: \"test, mirror\"}\n")
	code, out, errs := fedpipe(t, "verify", m, "--store", store, "--run")
	if code != 0 {
		t.Fatalf("verify --run: exit %d\n%s%s", code, out, errs)
	}
	verdicts := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "claim "); ok {
			v, _, _ := strings.Cut(rest, ":")
			src := "text"
			if strings.Contains(rest, "mirror") {
				src = "mirror"
			}
			verdicts[src] = v
			if !strings.Contains(rest, "variation within one training run") || !strings.Contains(rest, "signed-rank") {
				t.Errorf("a one-seed claim must name its test and what it shows: %s", l)
			}
		}
	}
	mirror := map[string]string{"holds": "reversed", "reversed": "holds", "undecided": "undecided"}
	if verdicts["text"] == "" || mirror[verdicts["text"]] != verdicts["mirror"] {
		t.Errorf("claim and mirror: %v\n%s", verdicts, out)
	}
	if !strings.Contains(out, "claims: ") || !strings.Contains(out, "of 1 seeds each") {
		t.Errorf("no claims summary line:\n%s", out)
	}
	// --only judges a claim only when it names no other method.
	if code, out, _ := fedpipe(t, "verify", m, "--store", store, "--only", "local"); code != 0 || strings.Contains(out, "claim ") {
		t.Errorf("--only local: exit %d, a claim naming fedavg judged:\n%s", code, out)
	}
	if code, out, _ := fedpipe(t, "verify", m, "--store", store, "--only", "local,fedavg"); code != 0 || strings.Count(out, "claim ") != 2 {
		t.Errorf("--only local,fedavg: exit %d\n%s", code, out)
	}
	rep := filepath.Join(dir, "rep")
	if code, _, errs := fedpipe(t, "report", m, "--store", store, "-o", rep); code != 0 {
		t.Fatalf("report: exit %d %s", code, errs)
	}
	md, _ := os.ReadFile(filepath.Join(rep, "report.md"))
	if !strings.Contains(string(md), "Claims") || !strings.Contains(string(md), verdicts["text"]+" | local is above fedavg") {
		t.Errorf("report.md lacks the claims:\n%s", md)
	}
}

// A store without the manifest's cells (or no store at all) beside a kept-results folder
// that keeps some: verify says in one line which command reads them.
func TestVerifyNamesTheKeptResults(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "manifests"), 0o755)
	m := writeManifest(t, filepath.Join(dir, "manifests"), tinyManifest+"expect:\n  - {method: local, metric: final_pooled, published: 50, tolerance: 1}\n")
	store := filepath.Join(dir, "store")
	code, _, errs := fedpipe(t, "verify", m, "--store", store)
	if code != exitInvalid || strings.Contains(errs, "reproduced") {
		t.Errorf("nothing kept: exit %d, %s", code, errs)
	}
	cells := filepath.Join(dir, "reproduced", "cells", "tiny")
	os.MkdirAll(cells, 0o755)
	os.WriteFile(filepath.Join(cells, "evaluate%20local%20seed=0.json"), []byte("{}"), 0o644)
	code, _, errs = fedpipe(t, "verify", m, "--store", store)
	if code != exitInvalid || !strings.Contains(errs, "no fedpipe store found") || !strings.Contains(errs, "`fedpipe reproduced "+m) {
		t.Errorf("no store, kept results: exit %d, %s", code, errs)
	}
	emptyStore(t, store)
	code, out, _ := fedpipe(t, "verify", m, "--store", store)
	if code != exitMismatch || !strings.Contains(out, "1 not computed") || !strings.Contains(out, "reproduced/ keeps paper-scale results of this manifest") {
		t.Errorf("empty store, kept results: exit %d\n%s", code, out)
	}
}
