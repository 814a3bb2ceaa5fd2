package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// Issue 61, minor case: the temporary files of a push killed mid-write into a directory
// remote (named .tmp-HOSTTAG.PID-…) are removed by the next push from this host; a live
// writer's, and those of an older fedpipe (no writer recorded), stay.
func TestPushRemovesAKilledPushsTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	rem := filepath.Join(dir, "remote")
	m := writeManifest(t, dir, tinyManifest)
	runJSON(t, "run", m, "--store", store)
	if code, _, errs := fedpipe(t, "push", m, "--store", store, "--remote", rem); code != 0 {
		t.Fatalf("push: exit %d\n%s", code, errs)
	}
	// A process that has ended: its pid names a dead writer.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no `true` to run:", err)
	}
	host, _ := os.Hostname()
	sum := sha256.Sum256([]byte(host))
	tag := hex.EncodeToString(sum[:4])
	killed := filepath.Join(rem, "cas", ".tmp-"+tag+"."+strconv.Itoa(dead.ProcessState.Pid())+"-0123456789abcdef-"+strings.Repeat("a", 64))
	live := filepath.Join(rem, "ac", ".tmp-"+tag+"."+strconv.Itoa(os.Getpid())+"-0123456789abcdef-"+strings.Repeat("b", 64))
	legacy := filepath.Join(rem, "cas", ".tmp-"+strings.Repeat("c", 64)+"-0123456789abcdef")
	for _, p := range []string{killed, live, legacy} {
		if err := os.WriteFile(p, []byte("half an object"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errs := fedpipe(t, "push", m, "--store", store, "--remote", rem); code != 0 || !strings.Contains(errs, "removed 1 temporary file") {
		t.Errorf("push after a killed one: exit %d\n%s", code, errs)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	if exists(killed) || !exists(live) || !exists(legacy) {
		t.Errorf("after the next push: killed writer's %v (want gone), live writer's %v, older fedpipe's %v (want kept)",
			exists(killed), exists(live), exists(legacy))
	}
}
