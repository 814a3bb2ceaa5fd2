package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// While a run holds the store, a second run says at once whom it waits for; every
// read-only command (status, verify, run --dry-run, ls, diff, show) answers from a snapshot
// without waiting (given a short --lock-timeout, one that waited would fail).
func TestReadersDoNotWaitForARun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two processes")
	}
	dir := t.TempDir()
	m := writeManifest(t, dir, strings.Replace(killManifest, "rounds: 40", "rounds: 100000", 1)+
		"expect:\n  - {method: local, metric: final_pooled, published: 50}\n")
	store := filepath.Join(dir, "s")
	first := subprocess("run", m, "--store", store, "--quiet")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Process.Kill(); _ = first.Wait() }()
	pid := strconv.Itoa(first.Process.Pid)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(store, "fedpipe.lock")); strings.HasPrefix(string(b), pid+"\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first run never took the store")
		}
	}

	second := subprocess("run", m, "--store", store, "--lock-timeout", "300ms")
	var errb bytes.Buffer
	second.Stderr = &errb
	if err := second.Run(); err == nil {
		t.Fatal("a second run did not wait")
	}
	want := "waiting for pid " + pid + " (running `"
	if msg := errb.String(); !strings.Contains(msg, want) || !strings.Contains(msg, "— up to 0.3 s") || !strings.Contains(msg, "since ") {
		t.Errorf("second run's message lacks %q:\n%s", want, msg)
	}

	for _, args := range [][]string{{"status", m}, {"verify", m}, {"run", m, "--dry-run"},
		{"ls", m}, {"diff", m}, {"show", m, "--manifest"}, {"push", m, "--remote", filepath.Join(dir, "kept"), "--results-only"}} {
		start := time.Now()
		code, out, errs := fedpipe(t, append(args, "--store", store, "--lock-timeout", "2s")...)
		if took := time.Since(start); took > 15*time.Second {
			t.Errorf("%s took %v: it waited for the run", args[0], took)
		}
		// The run records its manifest when it ends, so diff and show find none yet (exit 1).
		if wantCode := map[string]int{"verify": 3, "diff": 1, "show": 1}[args[0]]; code != wantCode || strings.Contains(errs, "gave up") {
			t.Errorf("%v: exit %d, want %d from a snapshot\n%s%s", args, code, wantCode, out, errs)
		}
		if want := map[string]string{"diff": "no run of this manifest recorded", "show": "no results recorded"}[args[0]]; !strings.Contains(errs, want) {
			t.Errorf("%v: stderr lacks %q:\n%s", args, want, errs)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".fedpipe-snapshot-*")); len(left) > 0 {
		t.Errorf("snapshots left behind: %v", left)
	}
}
