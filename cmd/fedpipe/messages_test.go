package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMessagesSayWhatToDo: a tab in a manifest's indentation is named as such, with its line;
// a list given to -S without brackets gets the bracketed form; a misspelt command or manifest
// path gets the nearest one; each exits 2.
func TestMessagesSayWhatToDo(t *testing.T) {
	dir := t.TempDir()
	tab := filepath.Join(dir, "tab.yaml")
	os.WriteFile(tab, []byte("name: t\nseeds: [0]\ndataset:\n\tname: synthetic\n"), 0o644)
	q := filepath.Join("..", "..", "manifests", "quickstart.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", tab, "--dry-run"}, tab + ":4: tab at line 4: YAML indents with spaces, not tabs"},
		{[]string{"run", q, "-S", "seeds=0,1,2", "--dry-run"}, `a list is written in brackets, quoted for the shell: -S 'seeds=[0,1,2]'`},
		{[]string{"lsx"}, `unknown command "lsx"; did you mean "ls"?`},
		{[]string{"run", filepath.Join("..", "..", "manifests", "quickstrt.yaml")}, "did you mean " + q + "?"},
	} {
		code, _, errOut := fedpipe(t, c.args...)
		if code != exitInvalid || !strings.Contains(errOut, c.want) {
			t.Errorf("fedpipe %v: exit %d\n%s\nwant exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
	if _, _, errOut := fedpipe(t, "zzzzzz"); strings.Contains(errOut, "did you mean") {
		t.Errorf("a suggestion for a word close to no command: %s", errOut)
	}
}

// TestDescriptionFollowsOverrides: the report under a run with -S prints the manifest's
// description and, under it, the overrides (the quick start says "over 20 rounds"; with
// train.rounds=4 that sentence is no longer true alone); without overrides, the file's alone;
// a description edited in the file reruns the report instead of printing the old one.
func TestDescriptionFollowsOverrides(t *testing.T) {
	dir := t.TempDir()
	m := writeManifest(t, dir, "description: FedAvg against Local over 4 rounds.\n"+tinyManifest)
	store := filepath.Join(dir, "store")
	r := runJSON(t, "run", m, "--store", store, "-S", "train.rounds=2")
	if !strings.Contains(r.Report, "FedAvg against Local over 4 rounds.\n\nWith overrides: `-S train.rounds=2`") {
		t.Errorf("report with an override:\n%s", r.Report)
	}
	r = runJSON(t, "run", m, "--store", store)
	if !strings.Contains(r.Report, "over 4 rounds.") || strings.Contains(r.Report, "With overrides") {
		t.Errorf("report without overrides:\n%s", r.Report)
	}
	os.WriteFile(m, []byte("description: FedAvg against Local, edited.\n"+tinyManifest), 0o644)
	r = runJSON(t, "run", m, "--store", store)
	if !strings.Contains(r.Report, "FedAvg against Local, edited.") {
		t.Errorf("report after the description was edited:\n%s", r.Report)
	}
}
