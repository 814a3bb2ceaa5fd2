package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
)

// runJSON runs fedpipe in-process with --json and decodes its output.
type stageJSON struct {
	Kind    string            `json:"kind"`
	Name    string            `json:"name"`
	Key     string            `json:"key"`
	State   string            `json:"state"`
	Reason  string            `json:"reason"`
	Seconds float64           `json:"seconds"`
	Outputs map[string]string `json:"outputs"`
	// ResumedFrom is set when a train stage continued from a checkpoint.
	ResumedFrom int `json:"resumed_from"`
}

type runOut struct {
	Stages []stageJSON `json:"stages"`
	Report string      `json:"report"`
}

func fedpipe(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func runJSON(t *testing.T, args ...string) runOut {
	t.Helper()
	code, out, errs := fedpipe(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("fedpipe %v: exit %d\n%s", args, code, errs)
	}
	var r runOut
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	return r
}

func states(r runOut) map[string]string {
	m := map[string]string{}
	for _, s := range r.Stages {
		m[s.Name] = s.State
	}
	return m
}

const tinyManifest = `name: tiny
seeds: [0]
dataset: {name: synthetic, alpha: 0.5, beta: 0.5, devices: 6}
partition: {scheme: natural}
model: {arch: logreg}
train: {rounds: 4, participation: 0.5, local_epochs: 1, batch_size: 16, lr: 0.05, eval_every: 2, checkpoint_every: 1}
methods:
  - name: fedavg
  - name: local
    train: {lr: 0.05}
`

func writeManifest(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCachedRerunAndSelectiveInvalidation(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest)

	first := runJSON(t, "run", m, "--store", store)
	if len(first.Stages) != 6 { // 1 partition, 2 train, 2 evaluate, 1 report
		t.Fatalf("got %d stages: %+v", len(first.Stages), first.Stages)
	}
	for _, s := range first.Stages {
		if s.State != "ran" {
			t.Errorf("first run: %s is %s", s.Name, s.State)
		}
	}
	if !strings.Contains(first.Report, "| FedAvg |") || !strings.Contains(first.Report, "| Local |") {
		t.Errorf("report lacks rows:\n%s", first.Report)
	}

	second := runJSON(t, "run", m, "--store", store)
	for _, s := range second.Stages {
		if s.State != "cached" {
			t.Errorf("second run: %s is %s", s.Name, s.State)
		}
	}
	if second.Report != first.Report {
		t.Error("cached report differs")
	}

	// Change only local's learning rate: only local's train and evaluate, and the report, rerun.
	writeManifest(t, dir, strings.Replace(tinyManifest, "train: {lr: 0.05}", "train: {lr: 0.1}", 1))
	code, out, _ := fedpipe(t, "status", m, "--store", store)
	if code != 0 || !strings.Contains(out, "lr 0.05 → 0.1") {
		t.Errorf("status should say the lr changed; got:\n%s", out)
	}
	third := runJSON(t, "run", m, "--store", store)
	want := map[string]string{
		"partition seed=0":       "cached",
		"train fedavg seed=0":    "cached",
		"evaluate fedavg seed=0": "cached",
		"train local seed=0":     "ran",
		"evaluate local seed=0":  "ran",
		"report":                 "ran",
	}
	got := states(third)
	for name, st := range want {
		if got[name] != st {
			t.Errorf("after lr change: %s is %q, want %q", name, got[name], st)
		}
	}
}

func TestSameSeedSameBitsAcrossStores(t *testing.T) {
	dir := t.TempDir()
	m := writeManifest(t, dir, tinyManifest)
	a := runJSON(t, "run", m, "--store", filepath.Join(dir, "a"))
	b := runJSON(t, "run", m, "--store", filepath.Join(dir, "b"))
	for i := range a.Stages {
		if a.Stages[i].Key != b.Stages[i].Key {
			t.Errorf("%s: keys differ across stores", a.Stages[i].Name)
		}
		for name, d := range a.Stages[i].Outputs {
			if b.Stages[i].Outputs[name] != d {
				t.Errorf("%s output %s: digest %s vs %s", a.Stages[i].Name, name, d, b.Stages[i].Outputs[name])
			}
		}
	}
}

func TestInvalidInputExitsTwoAndWritesNothing(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, strings.Replace(tinyManifest, "rounds: 4", "rounds: -4", 1))
	code, _, errs := fedpipe(t, "run", m, "--store", store)
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, errs)
	}
	if !strings.Contains(errs, "m.yaml:6:") || !strings.Contains(errs, "train.rounds") {
		t.Errorf("error should name file:line and field; got %s", errs)
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("invalid input created the store directory")
	}
	missing := writeManifest(t, dir, "name: x\ndataset: {name: fmnist, path: "+filepath.Join(dir, "nowhere")+"}\nmethods: [{name: fedavg}]\n")
	code, _, errs = fedpipe(t, "run", missing, "--store", store)
	if code != 2 || !strings.Contains(errs, filepath.Join(dir, "nowhere")) || !strings.Contains(errs, "apt-get install dataset-fashion-mnist") {
		t.Errorf("missing data: exit %d, stderr:\n%s", code, errs)
	}
	if code, _, _ := fedpipe(t, "frobnicate"); code != 2 {
		t.Errorf("unknown command exit %d", code)
	}
}

func TestCorruptBlobIsNoticedAndRecomputed(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest)
	first := runJSON(t, "run", m, "--store", store)
	var target stageJSON
	for _, s := range first.Stages {
		if s.Name == "evaluate local seed=0" {
			target = s
		}
	}
	d, err := artifacts.ParseDigest(target.Outputs["summary"])
	if err != nil {
		t.Fatal(err)
	}
	if err := artifacts.FlipByte(store, d, 10); err != nil {
		t.Fatal(err)
	}
	code, out, _ := fedpipe(t, "status", m, "--store", store)
	if code != 0 || !strings.Contains(out, "stale") || !strings.Contains(out, "failed verification") {
		t.Errorf("status after corruption:\n%s", out)
	}
	again := runJSON(t, "run", m, "--store", store)
	got := states(again)
	if got["evaluate local seed=0"] != "ran" || got["train local seed=0"] != "cached" {
		t.Errorf("after corruption: %v", got)
	}
	if again.Report != first.Report {
		t.Error("recomputed report differs from the original")
	}
	for _, s := range again.Stages {
		if s.Name == target.Name && s.Outputs["summary"] != target.Outputs["summary"] {
			t.Error("recomputed output has a different digest")
		}
	}
}
