//go:build linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fullDiskManifest has ten clients each keeping a 17 MB model: its checkpoints outgrow a
// small filesystem fast.
const fullDiskManifest = `name: full
dataset: {name: synthetic, devices: 10}
partition: {scheme: natural}
model: {arch: mlp, hidden: [2048, 2048]}
train: {rounds: 3, local_epochs: 1, lr: 0.01, checkpoint_every: 1, eval_every: 0}
methods: [{name: local}]
`

// A full disk stops the run with a clear error (never a crash) and leaves no cached result
// whose outputs are missing. Needs root to mount a small tmpfs; skips otherwise.
func TestDiskFullFailsCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a tmpfs")
	}
	mnt := mountTmpfs(t, "100m")
	dir := t.TempDir()
	m := writeManifest(t, dir, fullDiskManifest)
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
	mnt := mountTmpfs(t, "200m")
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

// A disk that another process fills while a run writes: the run stops with "not enough
// free disk space" and exit 4 — never Badger's "unexpected fault address" (SIGBUS) when it
// would flush its tables on close — and, once space is freed, the rerun resumes and its
// outputs are bit-identical to an undisturbed run's. Slow (three trainings of a 17 MB
// model per client) and needs root to mount a tmpfs: `make test-faults` runs it.
func TestDiskFillingMidRunFailsCleanlyAndResumes(t *testing.T) {
	if os.Getenv("FEDPIPE_FAULT_TESTS") == "" {
		t.Skip("slow fault injection; run with FEDPIPE_FAULT_TESTS=1 (make test-faults)")
	}
	mnt := mountTmpfs(t, "300m")
	dir := t.TempDir()
	m := writeManifest(t, dir, fullDiskManifest)
	store := filepath.Join(mnt, "store")
	errPath := filepath.Join(dir, "stderr")
	errFile, err := os.Create(errPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := subprocess("run", m, "--store", store)
	cmd.Stderr = errFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once training has begun, fill the filesystem to the last byte.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(errPath)
		if strings.Contains(string(b), "train local seed=0 ...") {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("training did not start:\n%s", b)
		}
	}
	fill, err := os.Create(filepath.Join(mnt, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for err == nil {
		_, err = fill.Write(zeros)
	}
	fill.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the tmpfs: %v", err)
	}
	err = cmd.Wait()
	errFile.Close()
	errs, _ := os.ReadFile(errPath)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitEnvironment || !strings.Contains(string(errs), "not enough free disk space") ||
		strings.Contains(string(errs), "fatal error") || strings.Contains(string(errs), "panic") {
		t.Fatalf("a run on a disk filled meanwhile: %v, want exit %d with a message, no fault\n%s", err, exitEnvironment, errs)
	}
	if err := os.Remove(filepath.Join(mnt, "fill")); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-o", "remount,size=1g", mnt).CombinedOutput(); err != nil {
		t.Fatalf("grow the tmpfs: %v: %s", err, out)
	}
	got, _ := outputs(t, m, store)
	want, _ := outputs(t, m, filepath.Join(dir, "reference"))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after the disk filled, the rerun's outputs %v differ from an undisturbed run's %v", got, want)
	}
}

// mountTmpfs mounts a tmpfs of the given size (e.g. "100m") in a temporary folder for the
// test's duration and returns it; the test is skipped where mounting is not allowed.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s)", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	return mnt
}
