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
  - name: feddpa
    params: {impl: flbench}
  - name: fedala
    params: {impl: flbench}
  - name: pfedfda
    params: {impl: flbench}
`

// Issue 18: raising train.rounds with everything else equal continues from the cached
// shorter run, and the result is bit-identical to the longer run from scratch (the
// shorter run's evaluation at its last round, 3, which a 5-round run with eval_every 2
// does not make, is dropped). DM-PFL, whose phases cut the total, starts over; so do
// FedDPA and FedALA as FL-bench runs them, whose evaluation changes their training state
// (the workers' models), and pFedFDA, whose evaluation models the state's fingerprints
// record, since a 5-round run does not evaluate after round 3. From a cached 2-round run,
// which ends on an evaluation a 4-round run makes too, they continue.
func TestExtendRunIsBitIdentical(t *testing.T) {
	dir := t.TempDir()
	m := writeManifest(t, dir, extendManifest)
	store, fresh := filepath.Join(dir, "store"), filepath.Join(dir, "fresh")
	runJSON(t, "run", m, "--store", store)
	startsOver := func(name string) bool {
		return strings.Contains(name, "dmpfl") || strings.Contains(name, "feddpa") || strings.Contains(name, "fedala") ||
			strings.Contains(name, "pfedfda")
	}
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
		if cont == startsOver(line) {
			t.Errorf("status line %q", line)
		}
	}
	extended := runJSON(t, "run", m, "--store", store, "--set", "train.rounds=5")
	scratch := runJSON(t, "run", m, "--store", fresh, "--set", "train.rounds=5")
	sameAsScratch(t, extended, scratch, func(name string) int {
		if startsOver(name) {
			return 0
		}
		return 3
	})

	two, scratch4 := filepath.Join(dir, "two"), filepath.Join(dir, "scratch4")
	runJSON(t, "run", m, "--store", two, "--set", "train.rounds=2", "--only", "feddpa,fedala,pfedfda")
	extended = runJSON(t, "run", m, "--store", two, "--set", "train.rounds=4", "--only", "feddpa,fedala,pfedfda")
	scratch = runJSON(t, "run", m, "--store", scratch4, "--set", "train.rounds=4", "--only", "feddpa,fedala,pfedfda")
	sameAsScratch(t, extended, scratch, func(string) int { return 2 })
}

// sameAsScratch checks that the extended run's stages have the keys and outputs of the run
// from scratch, and that every train stage ran, continuing after round resumed(its name).
func sameAsScratch(t *testing.T, extended, scratch runOut, resumed func(name string) int) {
	t.Helper()
	want := map[string]stageJSON{}
	for _, s := range scratch.Stages {
		want[s.Name] = s
	}
	trains, wantTrains := 0, 0
	for _, s := range scratch.Stages {
		if s.Kind == "train" {
			wantTrains++
		}
	}
	for _, s := range extended.Stages {
		w := want[s.Name]
		if s.Key != w.Key {
			t.Fatalf("%s: key %s, from scratch %s", s.Name, s.Key, w.Key)
		}
		if s.Kind == "train" {
			trains++
			if r := resumed(s.Name); s.State != "ran" || s.ResumedFrom != r {
				t.Errorf("%s: state %s, resumed from %d, want ran from %d", s.Name, s.State, s.ResumedFrom, r)
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
	if trains != wantTrains || trains == 0 {
		t.Errorf("%d train stages ran, want %d", trains, wantTrains)
	}
}
