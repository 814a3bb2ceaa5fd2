//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A full disk stops the run with a clear error (never a crash) and leaves no cached result
// whose outputs are missing. Needs root to mount a small tmpfs; skips otherwise.
func TestDiskFullFailsCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a tmpfs")
	}
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=100m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s)", err, out)
	}
	defer exec.Command("umount", mnt).Run()
	dir := t.TempDir()
	// Ten clients each keeping a 17 MB model: checkpoints outgrow the filesystem fast.
	m := writeManifest(t, dir, `name: full
dataset: {name: synthetic, devices: 10}
partition: {scheme: natural}
model: {arch: mlp, hidden: [2048, 2048]}
train: {rounds: 3, local_epochs: 1, lr: 0.01, checkpoint_every: 1, eval_every: 0}
methods: [{name: local}]
`)
	store := filepath.Join(mnt, "store")
	code, _, errs := fedpipe(t, "run", m, "--store", store)
	if code != exitEnvironment || !strings.Contains(errs, "not enough free disk space") {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	code, out, errs := fedpipe(t, "fsck", "--store", store)
	if code != 0 || !strings.Contains(out, "(0 broken)") {
		t.Errorf("fsck after the failed run: exit %d\n%s%s", code, out, errs)
	}
}

// A read-only store fails with a clear error naming the path.
func TestReadOnlyStoreFailsCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a tmpfs")
	}
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=200m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s)", err, out)
	}
	defer exec.Command("umount", mnt).Run()
	m := writeManifest(t, t.TempDir(), tinyManifest)
	store := filepath.Join(mnt, "store")
	runJSON(t, "run", m, "--store", store)
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only (%v: %s)", err, out)
	}
	code, _, errs := fedpipe(t, "run", m, "--store", store)
	if code != exitEnvironment || !strings.Contains(errs, "read-only file system") || !strings.Contains(errs, store) {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
}
