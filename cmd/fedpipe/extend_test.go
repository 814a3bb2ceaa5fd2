package main

import (
	"path/filepath"
	"strings"
	"testing"
)

const extendManifest = `name: extend
seeds: [0]
dataset: {name: synthetic, alpha: 0.5, beta: 0.5, devices: 6}
partition: {scheme: natural}
model: {arch: mlp, hidden: [8]}
train: {rounds: 3, participation: 0.5, local_epochs: 1, batch_size: 16, lr: 0.05, momentum: 0.5, eval_every: 2, checkpoint_every: 1}
methods:
  - name: fedavg
  - name: ditto
  - name: fedobp
    params: {q: 0.9}
  - name: dmpfl
`

// Issue 18: raising train.rounds with everything else equal continues from the cached
// shorter run, and the result is bit-identical to the longer run from scratch (the
// shorter run's evaluation at its last round, 3, which a 5-round run with eval_every 2
// does not make, is dropped). DM-PFL, whose phases cut the total, starts over.
func TestExtendRunIsBitIdentical(t *testing.T) {
	dir := t.TempDir()
	m := writeManifest(t, dir, extendManifest)
	store, fresh := filepath.Join(dir, "store"), filepath.Join(dir, "fresh")
	runJSON(t, "run", m, "--store", store)
	// status says which train stages will continue.
	code, stdout, errs := fedpipe(t, "status", m, "--store", store, "--set", "train.rounds=5")
	if code != exitOK {
		t.Fatalf("status: %d %s", code, errs)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if !strings.Contains(line, " train ") {
			continue
		}
		cont := strings.Contains(line, "train.rounds 3 → 5; continues from the cached 3-round run")
		if cont == strings.Contains(line, "dmpfl") {
			t.Errorf("status line %q", line)
		}
	}
	extended := runJSON(t, "run", m, "--store", store, "--set", "train.rounds=5")
	scratch := runJSON(t, "run", m, "--store", fresh, "--set", "train.rounds=5")
	want := map[string]stageJSON{}
	for _, s := range scratch.Stages {
		want[s.Name] = s
	}
	trains := 0
	for _, s := range extended.Stages {
		w := want[s.Name]
		if s.Key != w.Key {
			t.Fatalf("%s: key %s, from scratch %s", s.Name, s.Key, w.Key)
		}
		if s.Kind == "train" {
			trains++
			resumed := 3
			if strings.Contains(s.Name, "dmpfl") {
				resumed = 0
			}
			if s.State != "ran" || s.ResumedFrom != resumed {
				t.Errorf("%s: state %s, resumed from %d, want ran from %d", s.Name, s.State, s.ResumedFrom, resumed)
			}
		}
		if len(s.Outputs) != len(w.Outputs) {
			t.Errorf("%s: %d outputs, from scratch %d", s.Name, len(s.Outputs), len(w.Outputs))
		}
		for name, d := range w.Outputs {
			if s.Outputs[name] != d {
				t.Errorf("%s: output %s differs from the run from scratch", s.Name, name)
			}
		}
	}
	if trains != 4 {
		t.Errorf("%d train stages ran, want 4", trains)
	}
}
