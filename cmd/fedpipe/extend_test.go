package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

const extendHeader = `name: extend
seeds: [0]
dataset: {name: synthetic, alpha: 0.5, beta: 0.5, devices: 6}
partition: {scheme: natural}
model: {arch: mlp, hidden: [8]}
train: {rounds: 3, participation: 0.5, local_epochs: 1, batch_size: 16, lr: 0.05, momentum: 0.5, eval_every: 2, checkpoint_every: 1}
methods:
`

// extendRuns lists a run of every registered method with its defaults and one more for
// each value of a word option that changes what the method declares about extension
// (manifest.MethodDef.Extension), by label, with that declaration.
func extendRuns() (labels []string, yaml string, decl map[string]manifest.Extension) {
	decl = map[string]manifest.Extension{}
	var b strings.Builder
	for _, name := range manifest.MethodNames() {
		d, _ := manifest.LookupMethod(name)
		base := manifest.ExtensionOf(&manifest.Run{Method: name})
		label := strings.ReplaceAll(name, "_", "-")
		labels, decl[label] = append(labels, label), base
		fmt.Fprintf(&b, "  - name: %s\n    method: %s\n", label, name)
		for _, p := range d.ParamDefs() {
			for _, v := range p.Choices {
				e := manifest.ExtensionOf(&manifest.Run{Method: name, Options: map[string]string{p.Name: v}})
				if e == base {
					continue
				}
				l := label + "-" + v
				labels, decl[l] = append(labels, l), e
				fmt.Fprintf(&b, "  - name: %s\n    method: %s\n    params: {%s: %s}\n", l, name, p.Name, v)
			}
		}
	}
	return labels, extendHeader + b.String(), decl
}

// Issue 18, for every registered method as it declares itself (issue 47): raising
// train.rounds with everything else equal continues from the cached shorter run, and the
// result is bit-identical to the longer run from scratch (the shorter run's evaluation at
// its last round, 3, which a 5-round run with eval_every 2 does not make, is dropped).
// A method that declares ExtendNever (DM-PFL, whose phases cut the total; FedSelect's
// official variant; pFedFDA's own code) starts over; so does one that declares
// ExtendAtEvaluation (FedDPA and FedALA as FL-bench runs them, whose evaluation changes
// their training state; pFedFDA's impl flbench), since a 5-round run does not evaluate after
// round 3. From a cached 2-round run, which ends on an evaluation a 4-round run makes too,
// those continue, bit-identical again.
func TestExtendRunIsBitIdentical(t *testing.T) {
	dir := t.TempDir()
	labels, body, decl := extendRuns()
	t.Logf("runs: %v", labels)
	m := writeManifest(t, dir, body)
	store, fresh := filepath.Join(dir, "store"), filepath.Join(dir, "fresh")
	runJSON(t, "run", m, "--store", store)
	label := func(stage string) string { // "train fedavg seed=0" → fedavg
		f := strings.Fields(stage)
		if len(f) < 2 {
			return ""
		}
		return f[1]
	}
	startsOver := func(stage string) bool { return decl[label(stage)] != manifest.ExtendAlways }
	// status says which train stages will continue.
	code, stdout, errs := fedpipe(t, "status", m, "--store", store, "--set", "train.rounds=5")
	if code != exitOK {
		t.Fatalf("status: %d %s", code, errs)
	}
	seen := 0
	for _, line := range strings.Split(stdout, "\n") {
		i := strings.Index(line, " train ")
		if i < 0 {
			continue
		}
		seen++
		cont := strings.Contains(line, "train.rounds 3 → 5; continues the cached 3-round run")
		if cont == startsOver(line[i+1:]) {
			t.Errorf("status line %q (declared %v)", line, decl[label(line[i+1:])])
		}
	}
	if seen != len(labels) {
		t.Errorf("status listed %d train stages, want %d", seen, len(labels))
	}
	extended := runJSON(t, "run", m, "--store", store, "--set", "train.rounds=5")
	scratch := runJSON(t, "run", m, "--store", fresh, "--set", "train.rounds=5")
	sameAsScratch(t, extended, scratch, func(name string) int {
		if startsOver(name) {
			return 0
		}
		return 3
	})

	var atEval []string
	for _, l := range labels {
		if decl[l] == manifest.ExtendAtEvaluation {
			atEval = append(atEval, l)
		}
	}
	if len(atEval) == 0 {
		t.Fatal("no method declares ExtendAtEvaluation")
	}
	only := strings.Join(atEval, ",")
	two, scratch4 := filepath.Join(dir, "two"), filepath.Join(dir, "scratch4")
	runJSON(t, "run", m, "--store", two, "--set", "train.rounds=2", "--only", only)
	extended = runJSON(t, "run", m, "--store", two, "--set", "train.rounds=4", "--only", only)
	scratch = runJSON(t, "run", m, "--store", scratch4, "--set", "train.rounds=4", "--only", only)
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
