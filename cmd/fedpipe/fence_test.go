package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 61, item 6 (report 6), with real processes: worker A is stopped (SIGSTOP) in the
// middle of a train stage for longer than its lease; worker B takes the stage over and
// finishes the sweep; A is continued (SIGCONT). A writes nothing of the stage — the
// remote's entry stays B's, byte for byte — says it lost the lease to B, and reports the
// stage as fetched, not as ran.
func TestRemoteWorkerPausedPastItsLeaseWritesNothing(t *testing.T) {
	onEachRemote(t, testRemoteWorkerPausedPastItsLeaseWritesNothing)
}

func testRemoteWorkerPausedPastItsLeaseWritesNothing(h *remoteHarness) {
	t := h.t
	m := writeManifest(t, h.dir, remoteKill)
	a := h.start("run", m, "--store", h.store("a"), "--remote", h.remoteURL("pause"), "--worker", "--lease-ttl", "2s", "--json")
	pid := a.cmd.Process.Pid
	defer a.cmd.Process.Signal(syscall.SIGCONT)

	// Stop A once it has pushed a checkpoint of a train stage it holds.
	ckptDir := h.objectPath("pause/ckpt")
	stage := ""
	for deadline := time.Now().Add(2 * time.Minute); stage == ""; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			a.cmd.Process.Kill()
			t.Fatalf("A pushed no checkpoint within 2 minutes:\n%s", a.err.String())
		}
		entries, _ := os.ReadDir(ckptDir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(ckptDir, e.Name()))
			var cp struct {
				Round  int    `json:"round"`
				Holder string `json:"holder"`
			}
			if err == nil && json.Unmarshal(b, &cp) == nil && strings.HasSuffix(cp.Holder, "/"+strconv.Itoa(pid)) && cp.Round >= 1 {
				if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				stage = e.Name()
				break
			}
		}
	}
	entry := h.objectPath("pause/ac/" + stage)
	if _, err := os.Stat(entry); err == nil {
		t.Fatalf("A finished stage %.12s before it was stopped; the test cannot check a takeover", stage)
	}

	b := h.start("run", m, "--store", h.store("b"), "--remote", h.remoteURL("pause"), "--worker", "--lease-ttl", "2s", "--json").json()
	took := false
	for _, st := range b.Stages {
		took = took || (st.Key == stage && st.State == "ran" && strings.Contains(st.Reason, "took over"))
	}
	if !took {
		t.Fatalf("B did not take over the stopped stage %.12s: %+v", stage, b.Stages)
	}
	written, err := os.ReadFile(entry)
	if err != nil {
		t.Fatalf("B's entry: %v", err)
	}
	finished := time.Now()

	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	ra := a.json()
	if after, err := os.ReadFile(entry); err != nil || !bytes.Equal(after, written) {
		t.Errorf("the entry of %.12s was rewritten after B finished (%v):\nB wrote %s\nnow     %s", stage, err, written, after)
	}
	if fi, err := os.Stat(entry); err == nil && fi.ModTime().After(finished) {
		t.Errorf("the entry of %.12s was written %v after B finished", stage, fi.ModTime().Sub(finished))
	}
	if !strings.Contains(a.err.String(), "lost the lease of ") || !strings.Contains(a.err.String(), "; not writing") {
		t.Errorf("A does not say it lost the lease:\n%s", a.err.String())
	}
	for _, st := range ra.Stages {
		if st.Key == stage && st.State == "ran" {
			t.Errorf("A reports the stage it lost as ran (%s)", st.Reason)
		}
	}
	h.checkNoCredentials()
}
