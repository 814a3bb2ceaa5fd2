//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 61, item 4 (report 5): on a read-only bind mount (or, not being root, without
// write permission) every command that only reads works on the store — status, ls, show,
// diff, verify, report, export and fsck without --repair — where each exited 4 with "open
// lock file: read-only file system"; the store is left exactly as it was.
func TestReadOnlyStoreCommands(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest+"expect:\n  - {method: local, metric: final_pooled, above: fedavg, tolerance: 1}\n")
	runJSON(t, "run", m, "--store", store)
	view := store
	if os.Geteuid() == 0 {
		view = filepath.Join(t.TempDir(), "ro")
		os.Mkdir(view, 0o755)
		if out, err := exec.Command("mount", "--bind", store, view).CombinedOutput(); err != nil {
			t.Skipf("no bind mount: %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("umount", view).Run() })
		if out, err := exec.Command("mount", "-o", "remount,ro,bind", view).CombinedOutput(); err != nil {
			t.Skipf("no read-only remount: %v %s", err, out)
		}
	} else {
		filepath.Walk(store, func(p string, fi os.FileInfo, err error) error {
			if err == nil {
				os.Chmod(p, fi.Mode().Perm()&^0o222)
			}
			return nil
		})
		t.Cleanup(func() {
			filepath.Walk(store, func(p string, fi os.FileInfo, err error) error {
				if err == nil {
					os.Chmod(p, fi.Mode().Perm()|0o200)
				}
				return nil
			})
		})
	}
	out := filepath.Join(dir, "out")
	for _, args := range [][]string{
		{"status", m},
		{"ls", m},
		{"show", m, "--manifest"},
		{"diff", m},
		{"verify", m},
		{"report", m, "-o", filepath.Join(out, "report")},
		{"export", m, "-o", filepath.Join(out, "export")},
		{"fsck"},
	} {
		code, stdout, stderr := fedpipe(t, append(args, "--store", view)...)
		if code != 0 {
			t.Errorf("fedpipe %s on a read-only store: exit %d\n%s%s", strings.Join(args[:1], " "), code, stdout, stderr)
		}
	}
	if code, _, stderr := fedpipe(t, "fsck", "--repair", "--store", view); code != 4 {
		t.Errorf("fsck --repair on a read-only store: exit %d, want 4 (it must write)\n%s", code, stderr)
	}
	if left, _ := os.ReadDir(os.TempDir()); len(left) != 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
}
