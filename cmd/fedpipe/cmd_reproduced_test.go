package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/verify/kept"
)

// reproducedOut is what `fedpipe reproduced --json` prints.
type reproducedOut struct {
	Manifests []struct {
		Skipped string `json:"skipped"`
		Cells   []struct {
			Method   string  `json:"method"`
			Verdict  string  `json:"verdict"`
			Seeds    int     `json:"seeds"`
			SeedsOf  int     `json:"seeds_of"`
			StaleWhy string  `json:"stale_why"`
			Measured float64 `json:"measured"`
			// StaleMeasured is what a stale cell's kept result measured.
			StaleMeasured float64 `json:"stale_measured"`
			StaleSeeds    int     `json:"stale_seeds"`
			// KeptOn and KeptOthers name the backend whose kept result the verdict reads,
			// and what the others' read.
			KeptOn     string   `json:"kept_on"`
			KeptOthers []string `json:"kept_others"`
		} `json:"cells"`
	} `json:"manifests"`
	Summary string `json:"summary"`
}

// Kept results: a cell computed for one of two seeds and pushed results-only into a
// directory is reproduced over that seed, the other cell not computed; the page is
// written and checked; an audit recomputes the kept train stage's first rounds; a
// change of settings makes the kept cell stale (saying what changed); a cell outside its
// tolerance differs (exit 3); a manifest whose data is missing is listed as not checked.
func TestReproducedAgainstKeptResults(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	dir := t.TempDir()
	body := strings.Replace(tinyManifest, "seeds: [0]", "seeds: [0, 1]", 1) +
		"expect:\n  - {method: fedavg, metric: final_pooled, published: 50, tolerance: 1000}\n" +
		"  - {method: local, metric: final_pooled, published: 50, tolerance: 1000}\n"
	m := writeManifest(t, dir, body)
	store, kept := filepath.Join(dir, "store"), filepath.Join(dir, "kept")
	cell := []string{"-S", "seeds=[0]", "--only", "fedavg"}
	if code, _, errOut := fedpipe(t, append([]string{"run", m, "--store", store, "-q"}, cell...)...); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	if code, _, errOut := fedpipe(t, append([]string{"push", m, "--store", store, "--remote", kept, "--results-only"}, cell...)...); code != 0 {
		t.Fatalf("push: %s", errOut)
	}
	if _, err := os.Stat(filepath.Join(kept, "cells", "tiny", "train%20fedavg%20seed=0.json")); err != nil {
		t.Fatalf("the push wrote no index entry for the kept train stage: %v", err)
	}
	check := func(args ...string) (int, reproducedOut, string) {
		t.Helper()
		code, out, errOut := fedpipe(t, append([]string{"reproduced", m, "--kept", kept, "--json"}, args...)...)
		var r reproducedOut
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("reproduced %v: exit %d, %v\n%s%s", args, code, err, out, errOut)
		}
		return code, r, errOut
	}
	code, r, errOut := check()
	if code != 0 || len(r.Manifests) != 1 || len(r.Manifests[0].Cells) != 2 {
		t.Fatalf("exit %d, %+v\n%s", code, r, errOut)
	}
	fa, lo := r.Manifests[0].Cells[0], r.Manifests[0].Cells[1]
	if fa.Verdict != "pass" || fa.Seeds != 1 || fa.SeedsOf != 2 || lo.Verdict != "not computed" {
		t.Errorf("cells %+v %+v: want fedavg reproduced over 1 of 2 seeds, local not computed", fa, lo)
	}
	if want := "1 of 2 published cells reproduced at paper scale (0 stale, 1 not computed)"; r.Summary != want {
		t.Errorf("summary %q, want %q", r.Summary, want)
	}

	page := filepath.Join(dir, "reproduced.md")
	if code, _, errOut := fedpipe(t, "reproduced", m, "--kept", kept, "--page", page); code != 0 {
		t.Fatalf("--page: exit %d %s", code, errOut)
	}
	text, _ := os.ReadFile(page)
	if !strings.Contains(string(text), "| fedavg |") || !strings.Contains(string(text), "reproduced") || !strings.Contains(string(text), "seed 0: ") {
		t.Errorf("page lacks the fedavg row or its provenance:\n%s", text)
	}
	if code, _, errOut := fedpipe(t, "reproduced", m, "--kept", kept, "--check", page); code != 0 {
		t.Errorf("--check of a current page: exit %d %s", code, errOut)
	}
	os.WriteFile(page, append(text, '\n'), 0o644)
	if code, _, errOut := fedpipe(t, "reproduced", m, "--kept", kept, "--check", page); code != exitFailure || !strings.Contains(errOut, "out of date") {
		t.Errorf("--check of an edited page: exit %d %s, want 1 and out of date", code, errOut)
	}

	code, out, errOut := fedpipe(t, "reproduced", m, "--kept", kept, "--audit", "2")
	if code != 0 || !strings.Contains(out, "1 reproduce their fingerprints") {
		t.Errorf("audit: exit %d\n%s%s", code, out, errOut)
	}

	measured := fa.Measured
	code, r, _ = check("-S", "train.lr=0.07")
	if fa := r.Manifests[0].Cells[0]; code != 0 || fa.Verdict != "stale" || !strings.Contains(fa.StaleWhy, "lr") ||
		fa.StaleSeeds != 1 || fa.StaleMeasured != measured || measured == 0 {
		t.Errorf("after a change of lr: exit %d, fedavg %+v; want stale naming lr, with the kept figure %v over 1 seed", code, fa, measured)
	}

	// The same kept results against a published number they are far from: differs, exit 3.
	// (Same manifest name and stages, so the same kept entries serve it.)
	os.Mkdir(filepath.Join(dir, "strict"), 0o755)
	strict := writeManifest(t, filepath.Join(dir, "strict"), strings.Replace(body, "published: 50, tolerance: 1000}", "published: 150, tolerance: 1}", 1))
	code, out, _ = fedpipe(t, "reproduced", strict, "--kept", kept)
	if code != exitMismatch || !strings.Contains(out, "differs") || !strings.Contains(out, "1 differ") {
		t.Errorf("a kept cell far from the published number: exit %d\n%s", code, out)
	}

	// A manifest whose data is not installed is listed, not an error.
	os.Mkdir(filepath.Join(dir, "nodata"), 0o755)
	nodata := writeManifest(t, filepath.Join(dir, "nodata"), "name: nodata\ndataset: {name: cifar10, path: "+filepath.Join(dir, "none")+"}\n"+
		"partition: {scheme: dirichlet, clients: 4}\nmethods: [{name: fedavg}]\nexpect:\n  - {method: fedavg, metric: final_pooled, published: 50}\n")
	code, out, errOut = fedpipe(t, "reproduced", nodata, "--kept", kept)
	if code != 0 || !strings.Contains(out, "not checked (data not installed") {
		t.Errorf("missing data: exit %d\n%s%s", code, out, errOut)
	}
}

// A manifest whose model.init names weights that are missing here lists each published
// cell as needing them, and counts those cells apart from the M of "N of M": they cannot
// be computed with what is installed.
func TestReproducedCountsCellsNeedingInitApart(t *testing.T) {
	dir := t.TempDir()
	body := strings.Replace(tinyManifest, "model: {arch: logreg}", "model: {arch: logreg, init: "+
		filepath.Join(dir, "pretrained.safetensors")+"}", 1) +
		"expect:\n  - {method: fedavg, metric: final_pooled, published: 50}\n  - {method: local, metric: final_pooled, published: 60}\n"
	m := writeManifest(t, dir, body)
	kept := filepath.Join(dir, "kept")
	if err := os.Mkdir(kept, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := fedpipe(t, "reproduced", m, "--kept", kept, "--json")
	var r reproducedOut
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if len(r.Manifests) != 1 || len(r.Manifests[0].Cells) != 2 {
		t.Fatalf("want one manifest of 2 cells: %+v", r)
	}
	for _, c := range r.Manifests[0].Cells {
		if c.Verdict != "needs" {
			t.Errorf("%s: verdict %q, want needs", c.Method, c.Verdict)
		}
	}
	if want := "0 of 0 published cells reproduced at paper scale (0 stale, 0 not computed); 2 more need model.init, not obtainable here"; r.Summary != want {
		t.Errorf("summary %q, want %q", r.Summary, want)
	}
	code, out, _ = fedpipe(t, "reproduced", m, "--kept", kept)
	if code != 0 || !strings.Contains(out, "needs model.init: "+filepath.Join(dir, "pretrained.safetensors")) {
		t.Errorf("text output: exit %d\n%s", code, out)
	}
}

// TestReproducedAloneChecksEveryTable: with no MANIFEST, reproduced checks the table
// manifests beside --kept, as make reproduced names them (the same output as naming them
// all), under a header row; a directory with no table manifests is refused with exit 2.
func TestReproducedAloneChecksEveryTable(t *testing.T) {
	keptDir := filepath.Join("..", "..", "reproduced")
	var tables []string
	for _, p := range kept.TablePatterns {
		m, _ := filepath.Glob(filepath.Join("..", "..", "manifests", p))
		tables = append(tables, m...)
	}
	if len(tables) < 20 {
		t.Fatalf("%d table manifests found", len(tables))
	}
	// The summary line: the cells' count, then the claims' and one line per paper.
	lastLine := func(s string) string {
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			if strings.Contains(l, "published cells reproduced at paper scale") {
				return l
			}
		}
		return ""
	}
	code, alone, errOut := fedpipe(t, "reproduced", "--kept", keptDir)
	if code != 0 {
		t.Fatalf("reproduced alone: exit %d\n%s", code, errOut)
	}
	code, named, errOut := fedpipe(t, append([]string{"reproduced", "--kept", keptDir}, tables...)...)
	if code != 0 {
		t.Fatalf("reproduced with every table named: exit %d\n%s", code, errOut)
	}
	// The same lines but for how the manifests' paths are written (absolute, or as named).
	if lastLine(alone) != lastLine(named) || strings.Count(alone, "\n") != strings.Count(named, "\n") ||
		!strings.Contains(lastLine(alone), "published cells reproduced at paper scale") {
		t.Errorf("alone: %q\nnamed: %q", lastLine(alone), lastLine(named))
	}
	if !strings.Contains(alone, "  method | cell | metric | expected | measured (mean of the kept seeds ± std over them) | diff | verdict\n") {
		t.Errorf("no header row:\n%s", alone)
	}
	empty := t.TempDir()
	os.Mkdir(filepath.Join(empty, "kept"), 0o755)
	if code, _, errOut := fedpipe(t, "reproduced", "--kept", filepath.Join(empty, "kept")); code != exitInvalid || !strings.Contains(errOut, "no table manifests") {
		t.Errorf("no table manifests beside --kept: exit %d, %s", code, errOut)
	}
}

// The kept FedOBP Table 6 FMNIST Dir(0.1) cells (FedOBP 96.46, FedPer 96.57, one seed
// each): the paper's bold, "FedOBP is the best of the column", is not read as holding, and
// its verdict names FedPer and the test over the clients of the one run; the summary
// counts the claims and says what they rest on, with a line per paper.
func TestReproducedClaimsOfKeptFMNIST(t *testing.T) {
	kept := filepath.Join("..", "..", "reproduced")
	m := filepath.Join("..", "..", "manifests", "fedobp-table6-fmnist-dir01.yaml")
	code, out, errOut := fedpipe(t, "reproduced", m, "--kept", kept)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	var best string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "claim ") && strings.Contains(l, "fedobp is the best of the column") {
			best = l
		}
	}
	if !(strings.Contains(best, "claim undecided") || strings.Contains(best, "claim reversed")) || !strings.Contains(best, "fedper") ||
		!strings.Contains(best, "96.46 vs 96.57") || !strings.Contains(best, "Wilcoxon signed-rank") || !strings.Contains(best, "variation within one training run") {
		t.Errorf("the best-of-column claim: %q\n%s", best, out)
	}
	if !strings.Contains(out, "\nclaims: ") || !strings.Contains(out, "of 4 seeds each") || !strings.Contains(out, "\nFedOBP: ") {
		t.Errorf("no claims summary, seeds or per-paper line:\n%s", out)
	}
}
