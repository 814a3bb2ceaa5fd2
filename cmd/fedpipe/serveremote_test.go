package main

import (
	"github.com/fedpipe/fedpipe/screens/watch"

	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Two workers share a file:// remote; a third process, which has no store of its own and
// only reads the remote, serves the page: it shows both workers' runs training, the run
// of the worker killed with SIGKILL as stalled once its lease is no longer renewed, then as
// taken over by the other worker, and finally every run finished.
func TestServeWorkersOnARemote(t *testing.T) {
	dir := t.TempDir()
	m := writeManifest(t, dir, watchManifest)
	remoteURL := "file://" + filepath.Join(dir, "remote")
	url := startServe(t, m, "--store", filepath.Join(dir, "reader"), "--remote", remoteURL)
	worker := func(name string) *exec.Cmd {
		cmd := subprocess("run", m, "--store", filepath.Join(dir, name), "--remote", remoteURL, "--worker", "--lease-ttl", "2s", "-q")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	victim, survivor := worker("victim"), worker("survivor")
	runs := func() []watch.Run {
		t.Helper()
		resp, err := http.Get(url + "runs.json")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var w watchOut
		if err := json.NewDecoder(resp.Body).Decode(&w); err != nil {
			t.Fatal(err)
		}
		return w.Runs
	}
	poll := func(what string, ok func([]watch.Run) bool) []watch.Run {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for {
			rs := runs()
			if ok(rs) {
				return rs
			}
			if time.Now().After(deadline) {
				t.Fatalf("the page never showed %s: %+v", what, rs)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	victimHolder := "/" + strconv.Itoa(victim.Process.Pid)
	rs := poll("both workers training", func(rs []watch.Run) bool {
		holders := map[string]bool{}
		for _, r := range rs {
			if r.State == watch.Training && r.Journal != nil && r.Journal.Leased {
				holders[r.Journal.Holder] = true
			}
		}
		return len(holders) == 2
	})
	if err := victim.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	victim.Wait()
	killed := ""
	for _, r := range rs {
		if strings.HasSuffix(r.Journal.Holder, victimHolder) {
			killed, victimHolder = r.Key, r.Journal.Holder
		}
	}
	if killed == "" {
		t.Fatalf("no run held by the victim (pid %d): %+v", victim.Process.Pid, rs)
	}
	find := func(rs []watch.Run) watch.Run {
		for _, r := range rs {
			if r.Key == killed {
				return r
			}
		}
		return watch.Run{}
	}
	r := find(poll("the killed worker's run stalled", func(rs []watch.Run) bool { return find(rs).State == "stalled" }))
	if !strings.Contains(r.Detail, "lease") {
		t.Fatalf("stalled without naming the lease: %q", r.Detail)
	}
	r = find(poll("the killed worker's run taken over", func(rs []watch.Run) bool {
		j := find(rs).Journal
		return j != nil && j.TookOverFrom == victimHolder && j.Holder != victimHolder
	}))
	if r.State != watch.Training && r.State != "finished" {
		t.Fatalf("taken over, the run is %s", r.State)
	}
	if r.State == watch.Training && !strings.Contains(r.Detail, "taken over from "+victimHolder) {
		t.Fatalf("a taken-over run's detail: %q", r.Detail)
	}
	if err := survivor.Wait(); err != nil {
		t.Fatalf("survivor: %v", err)
	}
	poll("every run finished", func(rs []watch.Run) bool {
		return watch.Settled(rs) && rs[0].State == "finished" && rs[1].State == "finished"
	})
}
