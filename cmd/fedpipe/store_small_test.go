//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A store whose MANIFEST is a named pipe (issue 69: "no fedpipe store found", exit 2) is
// damage: every command exits 4 naming the MANIFEST, and none blocks opening the pipe.
func TestManifestThatIsAFifoIsDamage(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest)
	if err := os.Mkdir(store, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(store, "MANIFEST"), 0o644); err != nil {
		t.Skipf("no named pipe: %v", err)
	}
	for _, args := range [][]string{{"status", m}, {"ls", m}, {"fsck"}, {"run", m}, {"fsck", "--salvage"}} {
		code, out, errs := fedpipe(t, append(args, "--store", store)...)
		if code != exitEnvironment || !strings.Contains(errs, "MANIFEST") || strings.Contains(errs, "no fedpipe store found") {
			t.Errorf("%s: exit %d, want %d naming the MANIFEST\n%s%s", strings.Join(args, " "), code, exitEnvironment, out, errs)
		}
	}
}

// A full temporary directory (a reader's snapshot cannot be made) is no reason to salvage
// (issue 69: fsck suggested --salvage).
func TestNoSalvageHintWhenTheDiskIsFull(t *testing.T) {
	full := fmt.Errorf("artifacts: copy of read-only store /s: %w", &os.PathError{Op: "write", Path: "/tmp/x", Err: syscall.ENOSPC})
	if h := salvageHint(full); h != "" {
		t.Errorf("a full temporary directory: hint %q", h)
	}
	if h := salvageHint(errors.New("artifacts: open store /s: bad")); h == "" {
		t.Error("no hint for a store Badger refused")
	}
}
