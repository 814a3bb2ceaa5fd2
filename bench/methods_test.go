package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/model"
	_ "github.com/fedpipe/fedpipe/stages/train/methods" // the methods register themselves
)

// TestMethodsTimesEachMethodAgainstFedAvg runs `bench --methods` on a small synthetic
// setting: FedAvg first (the reference, 1.00), then the selected methods with their implied
// multiples from their registrations, a profile by stage, and the costs table the queue
// reads.
func TestMethodsTimesEachMethodAgainstFedAvg(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "tiny-bench.yaml")
	if err := os.WriteFile(m, []byte(`name: tiny-bench
seeds: [0]
dataset: {name: synthetic, alpha: 0.5, beta: 0.5, devices: 6}
partition: {scheme: natural, test_fraction: 0.25}
model: {arch: mlp, hidden: [16]}
train: {rounds: 400, participation: 0.5, local_epochs: 2, batch_size: 16, lr: 0.05, eval_every: 100, checkpoint_every: 10}
methods:
  - name: fedavg
  - name: ditto
  - name: local
`), 0o644); err != nil {
		t.Fatal(err)
	}
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	costs, err := Methods(backend, MethodsOptions{Manifests: []string{m}, Methods: []string{"ditto"}, Rounds: 2, Eval: true, ProfileDir: filepath.Join(dir, "prof")}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if len(costs) != 2 || costs[0].Method != "fedavg" || costs[1].Method != "ditto" {
		t.Fatalf("timed %+v, want fedavg (the reference) then ditto alone", costs)
	}
	for _, c := range costs {
		if c.RoundCPU <= 0 || c.RoundWall <= 0 || c.EvalWall < 0 || !c.Declared {
			t.Errorf("%s: %+v", c.Label, c)
		}
	}
	if costs[1].Implied.Multiple != 2 {
		t.Errorf("ditto implies 2 trainings a round, got %v", costs[1].Implied)
	}
	text := out.String()
	for _, want := range []string{"tiny-bench", "fedavg", "ditto", "1.00", "2.00", "load after"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if p, _ := filepath.Glob(filepath.Join(dir, "prof", "*.pprof")); len(p) != 2 {
		t.Errorf("profiles written: %v, want one per method", p)
	}
	tsv := filepath.Join(dir, "costs.tsv")
	if err := WriteCosts(tsv, costs, true); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(tsv)
	if !strings.Contains(string(b), "tiny\tditto\tditto\t") || !strings.Contains(string(b), "\t2.000\t2.000\n") {
		t.Errorf("costs table:\n%s", b)
	}
}

// TestMethodsSelectsByLabel: --methods takes a manifest's labels as well as method names,
// so a labelled run (DM-PFL's fedavg-ft, a FedAvg with fine-tuning) is selected and
// counted as found, with no "no run labelled" line.
func TestMethodsSelectsByLabel(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "tiny-labels.yaml")
	if err := os.WriteFile(m, []byte(`name: tiny-labels
seeds: [0]
dataset: {name: synthetic, alpha: 0.5, beta: 0.5, devices: 4}
partition: {scheme: natural, test_fraction: 0.25}
model: {arch: mlp, hidden: [8]}
train: {rounds: 10, participation: 0.5, local_epochs: 1, batch_size: 16, lr: 0.05, eval_every: 5}
methods:
  - name: fedavg-ft
    method: fedavg
  - name: local-a
    method: local
  - name: ditto
`), 0o644); err != nil {
		t.Fatal(err)
	}
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	costs, err := Methods(backend, MethodsOptions{Manifests: []string{m}, Methods: []string{"fedavg-ft", "local-a"}, Rounds: 1}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if len(costs) != 2 || costs[0].Label != "fedavg-ft" || costs[1].Label != "local-a" {
		t.Fatalf("timed %+v, want fedavg-ft (the reference) then local-a", costs)
	}
	if strings.Contains(errb.String(), "no run labelled") {
		t.Errorf("a label that names a run was reported missing:\n%s", errb.String())
	}
}
