package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two method labels with identical settings are two runs sharing one cached stage: both
// are in the report and both expectations are verified.
func TestIdenticalLabelsAreTwoRuns(t *testing.T) {
	dir := t.TempDir()
	m := writeManifest(t, dir, `name: dup
dataset: {name: synthetic, devices: 6}
partition: {scheme: natural}
model: {arch: logreg}
train: {rounds: 1}
methods:
  - {name: x, method: fedavg}
  - {name: y, method: fedavg}
expect:
  - {method: x, metric: final_pooled, published: 50, tolerance: 100}
  - {method: y, metric: final_pooled, published: 50, tolerance: 100}
`)
	store := dir + "/store"
	res := runJSON(t, "run", m, "--store", store)
	if !strings.Contains(res.Report, "| x |") || !strings.Contains(res.Report, "| y |") {
		t.Errorf("report lacks a label:\n%s", res.Report)
	}
	trains := 0
	for _, s := range res.Stages {
		if strings.HasPrefix(s.Name, "train ") {
			trains++
		}
	}
	if trains != 1 {
		t.Errorf("%d train stages, want 1 shared", trains)
	}
	code, out, errs := fedpipe(t, "verify", m, "--store", store)
	if code != 0 || !strings.Contains(out, "2 passed, 0 failed, 0 not computed") {
		t.Errorf("verify: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := fedpipe(t, "export", m, "--store", store, "-o", filepath.Join(dir, "out"), "--format", "csv"); code != 0 {
		t.Errorf("export: exit %d\n%s%s", code, out, errs)
	}
	for _, label := range []string{"x", "y"} {
		if _, err := os.Stat(filepath.Join(dir, "out", "evaluate_"+label+"_seed-0", "summary.csv")); err != nil {
			t.Errorf("export lacks %s's evaluation: %v", label, err)
		}
	}
	code, out, errs = fedpipe(t, "report", m, "--store", store, "-o", filepath.Join(dir, "site"), "--json")
	if code != 0 || !strings.Contains(out, `"runs": 2`) || !strings.Contains(out, `"computed": 2`) {
		t.Errorf("report: exit %d\n%s%s", code, out, errs)
	}
}

// "-" reads the manifest from standard input, explicitly.
func TestManifestFromStdin(t *testing.T) {
	dir := t.TempDir()
	m := writeManifest(t, dir, tinyManifest)
	f, err := os.Open(m)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	code, out, errs := fedpipe(t, "run", "-", "--dry-run", "--store", filepath.Join(dir, "s"))
	if code != 0 || !strings.Contains(out, "would run") {
		t.Fatalf("run -: exit %d\n%s%s", code, out, errs)
	}
}

// A 1M-cell grid is refused by the command in well under a second, with the count.
func TestMillionCellRunRefusedFast(t *testing.T) {
	dir := t.TempDir()
	var lr, wd []string
	for i := 1; i <= 1000; i++ {
		lr = append(lr, fmt.Sprint(float64(i)/1000))
		wd = append(wd, fmt.Sprint(float64(i)/10000))
	}
	m := writeManifest(t, dir, tinyManifest+"grid: {train.lr: ["+strings.Join(lr, ", ")+"], train.weight_decay: ["+strings.Join(wd, ", ")+"]}\n")
	start := time.Now()
	code, _, errs := fedpipe(t, "run", m, "--store", filepath.Join(dir, "s"))
	if took := time.Since(start); took > time.Second {
		t.Errorf("took %v", took)
	}
	if code != 2 || !strings.Contains(errs, "2,000,000 cells") || !strings.Contains(errs, "--max-cells 10000") {
		t.Errorf("exit %d: %s", code, errs)
	}
}
