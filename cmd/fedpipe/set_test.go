package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/results/listing"
)

// --set overrides any manifest field before decoding: the run equals one of a manifest
// file that says the same, errors name the override, and the effective manifest is
// recorded with the results.
func TestSetOverridesTheManifest(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest)
	edited := strings.Replace(tinyManifest, "lr: 0.05, eval_every", "lr: 0.2, eval_every", 1)
	edited = strings.Replace(edited, "seeds: [0]", "seeds: [0, 1]", 1)
	want, err := manifest.ParseManifest("edited.yaml", []byte(edited))
	if err != nil {
		t.Fatal(err)
	}
	sets := []string{"--set", "train.lr=0.2", "-S", "seeds=[0,1]"}
	got := runJSON(t, append([]string{"run", m, "--store", store}, sets...)...)
	// The same stages as the edited file: same keys, but for the report, whose text says
	// which overrides made it (Manifest.EffectiveDescription).
	plan := runJSON(t, "run", writeManifest(t, t.TempDir(), edited), "--store", filepath.Join(dir, "other"), "--dry-run")
	if len(got.Stages) != len(plan.Stages) || len(want.Seeds) != 2 {
		t.Fatalf("%d stages with --set, %d from the edited file", len(got.Stages), len(plan.Stages))
	}
	if !strings.Contains(got.Report, "With overrides: `-S train.lr=0.2`, `-S seeds=[0,1]`") {
		t.Errorf("the report does not say which overrides made it:\n%s", got.Report)
	}
	for i := range got.Stages {
		if got.Stages[i].Kind == manifest.KindReport {
			continue
		}
		if got.Stages[i].Key != plan.Stages[i].Key {
			t.Errorf("%s: key %s with --set, %s from the edited file", got.Stages[i].Name, got.Stages[i].Key, plan.Stages[i].Key)
		}
	}
	// A method's field by its label, a method grid.
	if code, stdout, errs := fedpipe(t, "status", m, "--store", store, "-S", "methods.local.train.lr=0.3", "-S", "grid.train.rounds=[2,4]"); code != exitOK ||
		!strings.Contains(stdout, "train local rounds=2 seed=0") {
		t.Errorf("status with method override and grid: exit %d\n%s%s", code, stdout, errs)
	}
	// Errors name the override and exit 2; nothing runs.
	for _, c := range []struct{ set, want string }{
		{"train.lr=-1", "--set train.lr=-1: train.lr: must be greater than 0, got -1"},
		{"train.lrr=1", `--set train.lrr=1: train.lrr: unknown key (did you mean "lr"?)`},
		{"methods.fedavgg.train.lr=1", `methods has no entry named "fedavgg" (did you mean "fedavg"?)`},
		{"seeds=[0,", "--set seeds=[0,: value"},
		{"methods=[]", "--set methods=[]: methods: empty: list at least one method"},
		{"train.lr", "want KEY=VALUE"},
	} {
		code, _, errs := fedpipe(t, "run", m, "--store", store, "--set", c.set)
		if code != exitInvalid || !strings.Contains(errs, c.want) {
			t.Errorf("--set %s: exit %d, %q; want %q", c.set, code, errs, c.want)
		}
	}
	// The effective manifest is recorded with the results.
	code, stdout, errs := fedpipe(t, append([]string{"show", "--manifest", m, "--store", store}, sets...)...)
	if code != exitOK {
		t.Fatalf("show --manifest: exit %d %s", code, errs)
	}
	eff, err := manifest.ParseManifest("effective.yaml", []byte(stdout))
	if err != nil || eff.Train.LR != 0.2 || len(eff.Seeds) != 2 {
		t.Errorf("recorded manifest (%v):\n%s", err, stdout)
	}
}

// ls lists every run with its swept parameters, state and metrics; version names the key
// scheme and backend.
func TestLsAndVersion(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest)
	runJSON(t, "run", m, "--store", store)
	code, stdout, errs := fedpipe(t, "ls", m, "--store", store, "--json", "-S", "grid.train.rounds=[2,4]")
	var out struct{ Runs []listing.Row }
	if err := json.Unmarshal([]byte(stdout), &out); code != exitOK || err != nil {
		t.Fatalf("ls --json: exit %d (%v)\n%s%s", code, err, stdout, errs)
	}
	states := map[string]string{}
	for _, r := range out.Runs {
		states[r.Label] = r.State
		if r.Params["train.rounds"] == "" {
			t.Errorf("%s: no swept parameter column: %v", r.Label, r.Params)
		}
		if (r.State == listing.Cached) != (r.FinalMean != nil && r.BestPooled != nil) {
			t.Errorf("%s: state %s with metrics %v %v", r.Label, r.State, r.FinalMean, r.BestPooled)
		}
	}
	// rounds=4 is the manifest's own value: cached; rounds=2 never ran.
	if len(out.Runs) != 4 || states["fedavg rounds=4 seed=0"] != listing.Cached || states["local rounds=2 seed=0"] != listing.Missing {
		t.Errorf("ls states: %v", states)
	}
	// Changing lr makes the runs stale.
	code, stdout, _ = fedpipe(t, "ls", m, "--store", store, "--csv", "-S", "train.lr=0.07")
	if code != exitOK || !strings.HasPrefix(stdout, "label,method,seed,state,final_client_mean_pct") || strings.Count(stdout, ",stale,") != 1 {
		t.Errorf("ls --csv: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = fedpipe(t, "version", "--json")
	var v versionInfo
	if err := json.Unmarshal([]byte(stdout), &v); code != exitOK || err != nil || v.KeyScheme == "" || v.Backend == "" || v.CodeVersions["train"] == 0 {
		t.Errorf("version --json: exit %d (%v) %s", code, err, stdout)
	}
}
