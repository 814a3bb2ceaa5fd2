package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// A worker training while its S3 server goes away for several lease TTLs keeps training
// on its local checkpoints, says which remote it cannot reach, and — the server back —
// renews its lease and pushes its results: exit 0, the digests of a single-process run,
// no false "another worker took it over" (SLURM-NOTES: "A remote that goes away").
func TestRemoteOutageWorkerCarriesOn(t *testing.T) {
	h := newRemoteHarness(t)
	m := writeManifest(t, h.dir, strings.Replace(remoteKill, "  - name: local\n", "", 1))
	ref := h.start("run", m, "--store", h.store("ref"), "--json").json()
	url := h.remoteURL("outage")
	w := h.start("run", m, "--store", h.store("worker"), "--remote", url, "--worker", "--lease-ttl", "1s")
	ckptDir := h.objectPath("outage/ckpt")
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if entries, _ := os.ReadDir(ckptDir); len(entries) > 0 {
			break
		}
		if time.Now().After(deadline) {
			w.cmd.Process.Kill()
			t.Fatalf("no checkpoint within 2 minutes:\n%s", w.err.String())
		}
	}
	h.srv.Stop()
	time.Sleep(4 * time.Second) // four lease TTLs without a heartbeat
	h.srv.Restart(t)
	code := w.wait()
	errs := w.err.String() + w.out.String()
	if code != 0 {
		t.Fatalf("the worker exited %d:\n%s", code, errs)
	}
	if !strings.Contains(errs, url) || !strings.Contains(errs, "unreachable") && !strings.Contains(errs, "cannot reach") {
		t.Errorf("the outage is not reported naming %s:\n%s", url, errs)
	}
	if strings.Contains(errs, "took it over") {
		t.Errorf("the worker believed another took its stage over:\n%s", errs)
	}
	after := h.start("run", m, "--store", h.store("after"), "--remote", url, "--json").json()
	sameOutputs(t, "the worker's results, through an outage", ref, after)
	if n := count(after, "", "ran"); n != 0 {
		t.Errorf("after the outage a fresh store ran %d stages; the worker's results are not all in the remote", n)
	}
	h.checkNoCredentials()
}
