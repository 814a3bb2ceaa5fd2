package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/train"
)

// TestRunTogetherInLockstepMatchesAlone runs the quick start's sweep (two seeds of FedAvg,
// FedPer and Local, 6 rounds) once one run at a time and once with every run together, their
// clients in lockstep on fpfast (--together 8 --lockstep on), and checks every stage's
// outputs are the same bits, that the runs did share lockstep steps, and that run says how
// many runs train together.
func TestRunTogetherInLockstepMatchesAlone(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", filepath.Join("..", "..", "manifests", "quickstart.yaml"), "-S", "seeds=[0,1]", "-S", "train.rounds=6",
		"-S", "methods=[{name: fedavg}, {name: fedper}, {name: local}]"}
	alone := runJSON(t, append(args, "--store", filepath.Join(dir, "alone"))...)
	before := train.SharedSteps()
	code, _, errs := fedpipe(t, append(args, "--store", filepath.Join(dir, "together"), "--together", "8", "--lockstep", "on")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "6 of 6 runs train together (--together), their clients in lockstep") {
		t.Errorf("run does not say the runs train together:\n%s", errs)
	}
	if train.SharedSteps() == before {
		t.Error("no lockstep step held the clients of more than one run")
	}
	together := runJSON(t, append(args, "--store", filepath.Join(dir, "together"))...)
	if len(together.Stages) != len(alone.Stages) {
		t.Fatalf("%d stages together, %d alone", len(together.Stages), len(alone.Stages))
	}
	for i, a := range alone.Stages {
		b := together.Stages[i]
		if b.State != pipeline.StateCached || a.Key != b.Key {
			t.Fatalf("%s: %s with key %s after running together, want cached with %s", b.Name, b.State, b.Key, a.Key)
		}
		for name, d := range a.Outputs {
			if b.Outputs[name] != d {
				t.Errorf("%s: output %s differs when trained together", a.Name, name)
			}
		}
	}
}

// TestTogetherFlags: the default is one run at a time on the CPU backends, and bad values
// of --together and --lockstep are refused with exit 2.
func TestTogetherFlags(t *testing.T) {
	f := commonFlags{lockstep: "auto"}
	n, hub, line, err := f.togetherFor(nil, "fpfast")
	if err != nil || n != 1 || hub || line != "" {
		t.Errorf("fpfast default: %d, %v, %q, %v; want one at a time, no lockstep", n, hub, line, err)
	}
	q := filepath.Join("..", "..", "manifests", "quickstart.yaml")
	for _, bad := range [][]string{{"--together", "-1"}, {"--lockstep", "sometimes"}} {
		code, _, errs := fedpipe(t, append([]string{"run", q, "--store", t.TempDir()}, bad...)...)
		if code != exitInvalid || !strings.Contains(errs, bad[0]) {
			t.Errorf("run %v: exit %d, %s; want 2 naming the flag", bad, code, errs)
		}
	}
	var runs []*manifest.Run
	for range 40 {
		runs = append(runs, &manifest.Run{Dataset: manifest.DatasetSpec{Name: "fmnist"}, Model: manifest.ModelSpec{Arch: "cnn4"},
			Partition: manifest.PartitionSpec{Clients: 100}, Train: manifest.TrainSpec{BatchSize: 32}})
	}
	if n, why := train.DefaultTogether(runs, "xla:cuda", 1<<40, 1<<40); n != train.MaxTogether {
		t.Errorf("XLA with ample memory: %d together (%s), want %d", n, why, train.MaxTogether)
	}
	if n, why := train.DefaultTogether(runs, "xla:cuda", 1<<40, 2*manifest.LockstepEstimate(runs[0])); n != 1 || !strings.Contains(why, "device memory") {
		t.Errorf("XLA with room for under two runs on the device: %d together (%s), want 1, bounded by device memory", n, why)
	}
}
