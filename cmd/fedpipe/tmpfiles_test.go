package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tmpFiles lists the files under dir whose names end in .tmp.
func tmpFiles(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(d.Name(), ".tmp") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// Issue 61, minor case: no *.tmp survives a report or export whose write fails midway (a
// full disk; here a folder where a file must go) or one killed midway (its leftovers are
// removed by the next report or export into the folder).
func TestReportAndExportLeaveNoTmpFiles(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest)
	runJSON(t, "run", m, "--store", store)
	for _, cmd := range []string{"export", "report"} {
		good := filepath.Join(dir, cmd+"-good")
		if code, _, errs := fedpipe(t, cmd, m, "--store", store, "-o", good); code != 0 {
			t.Fatalf("%s: exit %d\n%s", cmd, code, errs)
		}
		var names []string
		filepath.WalkDir(good, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				rel, _ := filepath.Rel(good, p)
				names = append(names, rel)
			}
			return nil
		})
		if len(names) < 2 {
			t.Fatalf("%s wrote %v", cmd, names)
		}
		// A write that fails: the last file's name is taken by a folder.
		bad := filepath.Join(dir, cmd+"-bad")
		if err := os.MkdirAll(filepath.Join(bad, names[len(names)-1], "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		if code, _, _ := fedpipe(t, cmd, m, "--store", store, "-o", bad); code == 0 {
			t.Errorf("%s into a folder where a file must go: exit 0", cmd)
		}
		if left := tmpFiles(bad); len(left) > 0 {
			t.Errorf("%s failed and left %v", cmd, left)
		}
		// A killed one's leftovers go with the next one.
		killed := filepath.Join(dir, cmd+"-killed")
		os.MkdirAll(filepath.Join(killed, filepath.Dir(names[0])), 0o755)
		stale := filepath.Join(killed, names[0]+".tmp")
		if err := os.WriteFile(stale, []byte("half a file"), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, errs := fedpipe(t, cmd, m, "--store", store, "-o", killed); code != 0 {
			t.Fatalf("%s after a killed one: exit %d\n%s", cmd, code, errs)
		}
		if left := tmpFiles(killed); len(left) > 0 {
			t.Errorf("%s left a killed one's %v", cmd, left)
		}
	}
}
