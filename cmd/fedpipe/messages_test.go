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
