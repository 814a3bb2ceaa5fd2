package main

import (
	"github.com/fedpipe/fedpipe/screens/watch"

	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A sweep long enough to watch: two runs of a few hundred quick rounds.
const watchManifest = `name: watch
seeds: [0]
dataset: {name: synthetic, alpha: 0.5, beta: 0.5, devices: 20}
partition: {scheme: natural}
model: {arch: logreg}
train: {rounds: 300, participation: 0.5, local_epochs: 1, batch_size: 16, lr: 0.05, eval_every: 25, checkpoint_every: 10}
methods:
  - name: fedavg
  - name: local
`

type watchOut struct {
	Runs []watch.Run `json:"runs"`
}

// watchOnce is one refresh of status --watch --json.
func watchOnce(t *testing.T, args ...string) []watch.Run {
	t.Helper()
	code, out, errs := fedpipe(t, append([]string{"status"}, append(args, "--watch", "--once", "--json")...)...)
	if code != 0 {
		t.Fatalf("status --watch: exit %d\n%s", code, errs)
	}
	var w watchOut
	if err := json.Unmarshal([]byte(out), &w); err != nil {
		t.Fatalf("status --watch --json: %v\n%s", err, out)
	}
	return w.Runs
}

// pollWatch refreshes until ok accepts the runs (failing after a minute).
func pollWatch(t *testing.T, what string, ok func([]watch.Run) bool, args ...string) []watch.Run {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		runs := watchOnce(t, args...)
		if ok(runs) {
			return runs
		}
		if time.Now().After(deadline) {
			t.Fatalf("never saw %s: %+v", what, runs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// status --watch follows a run in another process: waiting, then training with a round
// that grows, stalled once the process is killed, and finished after a rerun, when it ends
// by itself.
func TestStatusWatchFollowsARun(t *testing.T) {
	dir := t.TempDir()
	store := dir + "/store"
	m := writeManifest(t, dir, watchManifest)
	for _, r := range watchOnce(t, m, "--store", store) {
		if r.State != watch.Waiting || r.Journal != nil {
			t.Fatalf("before any run: %+v", r)
		}
	}
	cmd := subprocess("run", m, "--store", store, "-q")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	training := func(runs []watch.Run) (watch.Run, bool) {
		for _, r := range runs {
			if r.State == watch.Training && r.Journal != nil && len(r.Journal.Points) > 0 {
				return r, true
			}
		}
		return watch.Run{}, false
	}
	runs := pollWatch(t, "a run training", func(rs []watch.Run) bool { _, ok := training(rs); return ok }, m, "--store", store)
	first, _ := training(runs)
	if !strings.HasPrefix(first.Detail, "round ") || !strings.Contains(first.Detail, " of 300") {
		t.Fatalf("training detail %q", first.Detail)
	}
	pollWatch(t, "the round grow", func(rs []watch.Run) bool {
		r, ok := training(rs)
		return ok && r.Key == first.Key && r.Journal.Last().Round > first.Journal.Last().Round
	}, m, "--store", store)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	runs = pollWatch(t, "the killed run stalled", func(rs []watch.Run) bool {
		for _, r := range rs {
			if r.Key == first.Key && r.State == "stalled" && strings.Contains(r.Detail, "is gone") {
				return true
			}
		}
		return false
	}, m, "--store", store)
	if code, _, errs := fedpipe(t, "run", m, "--store", store, "-q"); code != 0 {
		t.Fatalf("rerun: exit %d\n%s", code, errs)
	}
	// Without --once it ends by itself once every run has finished.
	code, out, errs := fedpipe(t, "status", m, "--store", store, "--watch", "--interval", "100ms")
	if code != 0 || strings.Count(out, "finished ") != 2 || !strings.Contains(out, "2 runs: 2 finished") || !strings.Contains(out, "test acc") {
		t.Fatalf("status --watch after the runs: exit %d\n%s%s", code, out, errs)
	}
	for _, r := range watchOnce(t, m, "--store", store) {
		if r.State != "finished" || r.Journal == nil || r.Journal.Last().Round != 300 {
			t.Fatalf("after the runs: %+v", r)
		}
		if r.Key == first.Key && r.Journal.ResumedFrom == 0 {
			t.Fatalf("the killed run did not resume: %+v", r.Journal)
		}
	}
}

// Bad input to status --watch and serve exits 2 with a message, before anything listens.
func TestWatchAndServeRefuseBadInput(t *testing.T) {
	dir := t.TempDir()
	m := writeManifest(t, dir, watchManifest)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"status", "--watch"}, "expected at least one MANIFEST"},
		{[]string{"status", m, "--watch", "--interval", "1ms"}, "--interval 1ms: must be at least"},
		{[]string{"status", m, "--once"}, "--once goes with --watch"},
		{[]string{"status", filepath.Join(dir, "none.yaml"), "--watch"}, "none.yaml"},
		{[]string{"serve"}, "expected at least one MANIFEST"},
		{[]string{"serve", m, "--refresh", "1ms"}, "--refresh 1ms: must be at least"},
		{[]string{"serve", m, "--addr", "127.0.0.1:99999", "--store", filepath.Join(dir, "s")}, "invalid port"},
	} {
		code, _, errs := fedpipe(t, c.args...)
		if code != exitInvalid || !strings.Contains(errs, c.msg) {
			t.Errorf("fedpipe %v: exit %d, %q; want 2 and %q", c.args, code, errs, c.msg)
		}
	}
}
