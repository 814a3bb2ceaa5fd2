package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/safetensors"
	"github.com/fedpipe/fedpipe/artifacts/table"
)

// Exported tables carry their run's identity as columns (issue 18): manifest, stage, run,
// method, seed, the run's key and its settings (the swept ones among them), after the
// table's own columns.
func TestExportedTablesCarryRunIdentity(t *testing.T) {
	dir := t.TempDir()
	store, out := filepath.Join(dir, "store"), filepath.Join(dir, "out")
	m := writeManifest(t, dir, tinyManifest)
	grid := []string{"-S", "grid.train.lr=[0.05,0.5]"}
	runJSON(t, append([]string{"run", m, "--store", store}, grid...)...)
	if code, _, errs := fedpipe(t, append([]string{"export", m, "--store", store, "-o", out}, grid...)...); code != exitOK {
		t.Fatalf("export: %d %s", code, errs)
	}
	b, err := os.ReadFile(filepath.Join(out, "train_fedavg_lr-0.5_seed-0", "metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if !strings.HasPrefix(lines[0], "round,client,split,loss,accuracy,samples,manifest,stage,stage_key,run,method,seed,run_key,"+
		"dataset_name,") || !strings.Contains(lines[0], ",train_rounds,") || !strings.Contains(lines[0], ",train_lr,") ||
		!strings.Contains(lines[0], ",model_hidden,") || !strings.HasSuffix(lines[0], ",method_algorithm,params_uniform_weights") {
		t.Errorf("header %q", lines[0])
	}
	if !strings.Contains(lines[1], ",tiny,train,") || !strings.Contains(lines[1], ",fedavg lr=0.5 seed=0,fedavg,0,") ||
		!strings.Contains(lines[1], ",synthetic,") {
		t.Errorf("row %q", lines[1])
	}
	// The report's run table: a row per run, with its grid value, display name and key.
	runs, err := os.ReadFile(filepath.Join(out, "report", "runs.csv"))
	if err != nil || !strings.Contains(strings.SplitN(string(runs), "\n", 2)[0], ",display,run_key,dataset_name,") ||
		!strings.Contains(strings.SplitN(string(runs), "\n", 2)[0], ",train_lr,") ||
		!strings.Contains(string(runs), "fedavg lr=0.5 seed=0,") || !strings.Contains(string(runs), ",FedAvg lr=0.5,") {
		t.Errorf("report/runs.csv lacks the grid values, display names or keys (%v):\n%s", err, runs)
	}
	sum, err := table.ReadFile(filepath.Join(out, "evaluate_local_lr-0.05_seed-0", "summary.arrow"))
	if err != nil || sum.Col("train_lr") == nil || sum.Col("train_lr").Float64[0] != 0.05 || sum.Col("method").String[0] != "local" {
		t.Errorf("summary.arrow identity (%v)", err)
	}
}

// export --models writes models and masks as safetensors that read back equal.
func TestExportModelsAsSafetensors(t *testing.T) {
	dir := t.TempDir()
	store, out := filepath.Join(dir, "store"), filepath.Join(dir, "out")
	m := writeManifest(t, dir, tinyManifest+"  - name: fedobp\n    params: {q: 0.5}\n")
	runJSON(t, "run", m, "--store", store)
	if code, _, errs := fedpipe(t, "export", m, "--store", store, "-o", out, "--models", "--format", "csv"); code != exitOK {
		t.Fatalf("export --models: %d %s", code, errs)
	}
	g, err := safetensors.ReadFile(filepath.Join(out, "train_fedavg_seed-0", "global.safetensors"))
	if err != nil || len(g) == 0 || g[0].Name != "classifier.bias" && g[0].Name != "classifier.weight" {
		t.Errorf("global.safetensors: %v %v", err, g)
	}
	mask, err := safetensors.ReadFile(filepath.Join(out, "train_fedobp_seed-0", "mask-00000.safetensors"))
	if err != nil || len(mask) == 0 {
		t.Fatalf("mask-00000.safetensors: %v", err)
	}
	ones := 0
	for _, v := range mask[0].Data {
		if v != 0 && v != 1 {
			t.Fatalf("mask value %v", v)
		}
		ones += int(v)
	}
	if ones == 0 {
		t.Errorf("mask %s has no personalized entry at q=0.5", mask[0].Name)
	}
}
