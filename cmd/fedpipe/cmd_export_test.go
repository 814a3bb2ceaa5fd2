package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
)

// readCSVTable reads an exported CSV as its header and rows keyed by column name.
func readCSVTable(t *testing.T, path string) ([]string, []map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: %v (%d records)", path, err, len(recs))
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, c := range recs[0] {
			m[c] = r[i]
		}
		rows = append(rows, m)
	}
	return recs[0], rows
}

// Issue 46, item 4: export without -o writes exports/NAME; a partition, shared by every
// method and lr, carries its own identity rather than one run's; the runs table names its
// run column `run` as the other tables do, with the same values.
func TestExportIdentitiesAndDefaultFolder(t *testing.T) {
	t.Setenv(artifacts.EnvStore, "")
	root, m := project(t)
	t.Chdir(root)
	sweep := []string{"-S", "grid.train.lr=[0.05,0.1]"}
	if code, out, errs := runIn(t, append([]string{"run", m, "--quiet"}, sweep...)...); code != exitOK {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runIn(t, append([]string{"export", m, "--format", "csv"}, sweep...)...); code != exitOK {
		t.Fatalf("export without -o: exit %d\n%s%s", code, out, errs)
	}
	out := filepath.Join(root, "exports", "tiny")

	head, rows := readCSVTable(t, filepath.Join(out, "partition_seed-0", "assignment.csv"))
	if slices.Contains(head, "method") || slices.Contains(head, "train_lr") || rows[0]["run"] != "partition seed=0" ||
		rows[0]["seed"] != "0" || rows[0]["stage"] != "partition" {
		t.Errorf("the partition's identity: columns %v, first row %v; want run \"partition seed=0\", no method, no train_lr", head, rows[0])
	}

	_, summaries := readCSVTable(t, filepath.Join(out, "evaluate_fedavg_lr-0.1_seed-0", "summary.csv"))
	head, runs := readCSVTable(t, filepath.Join(out, "report", "runs.csv"))
	if slices.Contains(head, "config") && !slices.Contains(head, "run") {
		t.Fatalf("runs.csv names its run column config: %v", head)
	}
	found := false
	for _, r := range runs {
		found = found || r["run"] == summaries[0]["run"]
	}
	if len(runs) != 4 || !found {
		t.Errorf("runs.csv: %d rows %v; want 4, one with run %q as evaluate's summary says", len(runs), runs, summaries[0]["run"])
	}

	// docs/outputs.md's DuckDB example: the best over evaluation rounds of the client-mean
	// test accuracy (the mean over a round's clients first) is the summary's best client mean.
	_, metrics := readCSVTable(t, filepath.Join(out, "train_fedavg_lr-0.1_seed-0", "metrics.csv"))
	sum, n := map[string]float64{}, map[string]float64{}
	for _, r := range metrics {
		if r["split"] != "test" {
			continue
		}
		a, err := strconv.ParseFloat(r["accuracy"], 64)
		if err != nil {
			t.Fatal(err)
		}
		sum[r["round"]] += a
		n[r["round"]]++
	}
	best := 0.0
	for k := range sum {
		best = max(best, sum[k]/n[k])
	}
	want, err := strconv.ParseFloat(summaries[0]["best_accuracy_client_mean"], 64)
	if err != nil {
		t.Fatalf("summary.csv has no best_accuracy_client_mean: %v (%v)", err, summaries[0])
	}
	if d := best - want; d > 1e-9 || d < -1e-9 {
		t.Errorf("best client-mean test accuracy from metrics.csv %v, summary says %v", best, want)
	}
}

// TestExportsIdentifyTheirSettings: two exports of the same manifest, one with -S
// train.rounds=3, have the same folder names and run labels, but every table carries the run's
// key and its effective settings, so their rows stay apart when concatenated (the columns
// train_rounds and run_key differ; the partition, shared, has the same key in both).
func TestExportsIdentifyTheirSettings(t *testing.T) {
	dir := t.TempDir()
	m := writeManifest(t, dir, tinyManifest)
	store := filepath.Join(dir, "store")
	col := func(out, file, name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(out, file))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		head := strings.Split(lines[0], ",")
		for i, h := range head {
			if h == name {
				return strings.Split(lines[1], ",")[i]
			}
		}
		t.Fatalf("%s has no column %s: %s", file, name, lines[0])
		return ""
	}
	var outs []string
	for i, set := range [][]string{nil, {"-S", "train.rounds=3"}} {
		runJSON(t, append([]string{"run", m, "--store", store}, set...)...)
		out := filepath.Join(dir, fmt.Sprint("out", i))
		if code, _, errOut := fedpipe(t, append([]string{"export", m, "--store", store, "-o", out, "--format", "csv"}, set...)...); code != 0 {
			t.Fatalf("export %v: %s", set, errOut)
		}
		outs = append(outs, out)
	}
	const eval = "evaluate_fedavg_seed-0/summary.csv"
	if a, b := col(outs[0], eval, "train_rounds"), col(outs[1], eval, "train_rounds"); a != "4" || b != "3" {
		t.Errorf("train_rounds %s and %s, want 4 and 3", a, b)
	}
	if a, b := col(outs[0], eval, "run_key"), col(outs[1], eval, "run_key"); a == b || len(a) != 12 {
		t.Errorf("run keys %q and %q: want two different short keys", a, b)
	}
	if a, b := col(outs[0], eval, "run"), col(outs[1], eval, "run"); a != b {
		t.Errorf("the run labels differ (%s, %s): the test no longer shows what the columns add", a, b)
	}
	if col(outs[0], eval, "params_uniform_weights") == "" || col(outs[0], eval, "train_lr") != "0.05" {
		t.Error("the method's parameters or train.lr are missing")
	}
}
