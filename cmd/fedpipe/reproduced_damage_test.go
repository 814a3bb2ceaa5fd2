package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// keptFedavg computes tiny's fedavg cell (seed 0) and pushes it results-only into a fresh
// kept directory; it returns the manifest (expecting fedavg's figure), the directory, and
// the kept train stage's action entry and its "metrics" output's blob file.
func keptFedavg(t *testing.T) (m, kept, entry, blob string) {
	t.Helper()
	dir := t.TempDir()
	m = writeManifest(t, dir, tinyManifest+"expect:\n  - {method: fedavg, metric: final_pooled, published: 50, tolerance: 1000}\n")
	store, kept := filepath.Join(dir, "store"), filepath.Join(dir, "kept")
	cell := []string{"--only", "fedavg"}
	if code, _, errOut := fedpipe(t, append([]string{"run", m, "--store", store, "-q"}, cell...)...); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	if code, _, errOut := fedpipe(t, append([]string{"push", m, "--store", store, "--remote", kept, "--results-only"}, cell...)...); code != 0 {
		t.Fatalf("push: %s", errOut)
	}
	var idx struct{ Key string }
	b, err := os.ReadFile(filepath.Join(kept, "cells", "tiny", "train%20fedavg%20seed=0.json"))
	if err == nil {
		err = json.Unmarshal(b, &idx)
	}
	if err != nil {
		t.Fatal(err)
	}
	entry = filepath.Join(kept, "ac", idx.Key)
	var rec struct {
		Outputs map[string]string
		Sizes   map[string]int64
	}
	if b, err = os.ReadFile(entry); err == nil {
		err = json.Unmarshal(b, &rec)
	}
	if err != nil || rec.Outputs["metrics"] == "" {
		t.Fatalf("the kept train entry %s: %v %+v", entry, err, rec)
	}
	if rec.Sizes["metrics"] <= 0 {
		t.Errorf("the kept entry records no size for its metrics: %+v", rec)
	}
	return m, kept, entry, filepath.Join(kept, "cas", rec.Outputs["metrics"])
}

// reproducedWithin runs `fedpipe reproduced` and fails the test if it takes a minute.
func reproducedWithin(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := fedpipe(t, append([]string{"reproduced"}, args...)...)
		done <- result{code, out, errOut}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(time.Minute):
		t.Fatalf("reproduced %v still running after a minute", args)
		return 0, "", ""
	}
}

// A kept result that is damaged or missing, in any of these ways, fails `fedpipe
// reproduced` with exit 4, naming the stage and the file, at once — never a hang on a
// named pipe, never a read of /dev/zero or of a 20 GB sparse file, never a cell that
// quietly becomes "not computed".
func TestReproducedFailsOnDamagedKeptResult(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	m, kept, entry, blob := keptFedavg(t)
	if code, out, errOut := reproducedWithin(t, m, "--kept", kept); code != 0 || !strings.Contains(out, "1 of 1 published cells reproduced") {
		t.Fatalf("intact: exit %d\n%s%s", code, out, errOut)
	}
	const stage = `"train fedavg seed=0"`
	index := filepath.Join(kept, "cells", "tiny", "train%20fedavg%20seed=0.json")
	flip := func(path string) func() error {
		return func() error {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b[len(b)/2] ^= 0x10
			return os.WriteFile(path, b, 0o644)
		}
	}
	flipAt := func(path string, at int) func() error {
		return func() error {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b[at] ^= 0x10
			return os.WriteFile(path, b, 0o644)
		}
	}
	replace := func(path string, make func() error) func() error {
		return func() error {
			if err := os.Remove(path); err != nil {
				return err
			}
			return make()
		}
	}
	cases := []struct {
		name, file string
		damage     func() error
		says       string
	}{
		{"blob missing", blob, func() error { return os.Remove(blob) }, "is not in the remote"},
		{"blob flipped", blob, flip(blob), "neither hash to its name"},
		{"blob truncated", blob, func() error { return os.Truncate(blob, 10) }, "neither hash to its name"},
		{"blob grown", blob, func() error { return os.Truncate(blob, 1<<20) }, "more than the"},
		{"blob a named pipe", blob, replace(blob, func() error { return syscall.Mkfifo(blob, 0o644) }), "named pipe"},
		{"blob a link to /dev/zero", blob, replace(blob, func() error { return os.Symlink("/dev/zero", blob) }), "a device"},
		{"blob a 20 GB sparse file", blob, func() error { return os.Truncate(blob, 20<<30) }, "more than the"},
		{"entry missing", entry, func() error { return os.Remove(entry) }, "is missing"},
		// The entry's first byte: its middle byte falls in its free-form meta or its digests
		// depending on the run's timings, and a flip there reads as an edit, not as damage.
		{"entry flipped", entry, flipAt(entry, 0), "unreadable"},
		{"entry a named pipe", entry, replace(entry, func() error { return syscall.Mkfifo(entry, 0o644) }), "named pipe"},
		{"index entry flipped", index, func() error { return os.WriteFile(index, []byte("{"), 0o644) }, "index entry is unreadable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			saved, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				os.Remove(c.file)
				if err := os.WriteFile(c.file, saved, 0o644); err != nil {
					t.Fatal(err)
				}
			}()
			if err := c.damage(); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			code, out, errOut := reproducedWithin(t, m, "--kept", kept)
			if code != exitEnvironment || !strings.Contains(errOut, stage) || !strings.Contains(errOut, c.file) || !strings.Contains(errOut, c.says) {
				t.Errorf("exit %d, want %d naming %s, %s and %q\n%s%s", code, exitEnvironment, stage, c.file, c.says, out, errOut)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// A kept-results directory that cannot be written (a read-only mount as root, else a
// directory without write permission) verifies as a writable one does.
func TestReproducedReadsReadOnlyKeptDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	m, kept, _, _ := keptFedavg(t)
	ro := kept
	if os.Geteuid() == 0 {
		mnt := filepath.Join(t.TempDir(), "mnt")
		if err := os.Mkdir(mnt, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("mount", "--bind", kept, mnt).CombinedOutput(); err != nil {
			t.Skipf("cannot bind-mount here (%v: %s)", err, out)
		}
		defer exec.Command("umount", mnt).Run()
		if out, err := exec.Command("mount", "-o", "remount,bind,ro", mnt).CombinedOutput(); err != nil {
			t.Skipf("cannot remount read-only (%v: %s)", err, out)
		}
		ro = mnt
		if err := os.WriteFile(filepath.Join(ro, "probe"), nil, 0o644); err == nil {
			t.Fatal("the read-only mount is writable")
		}
	} else {
		filepath.WalkDir(kept, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o555)
			}
			return nil
		})
		defer filepath.WalkDir(kept, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	}
	code, out, errOut := reproducedWithin(t, m, "--kept", ro)
	if code != 0 || !strings.Contains(out, "1 of 1 published cells reproduced") {
		t.Errorf("read-only kept directory: exit %d\n%s%s", code, out, errOut)
	}
}
