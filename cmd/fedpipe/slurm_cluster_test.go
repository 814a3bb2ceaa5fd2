package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/slurmtest"
)

// Two long train stages (a checkpoint every 5 rounds), so that an array task can be
// cancelled in the middle of one.
const slurmCancelSweep = `name: slurm-cancel
seeds: [0]
dataset: {name: synthetic, alpha: 1, beta: 1, devices: 20}
partition: {scheme: natural}
model: {arch: mlp, hidden: [64]}
train: {rounds: 600, participation: 0.5, local_epochs: 2, batch_size: 16, lr: 0.05, eval_every: 100, checkpoint_every: 5}
methods:
  - name: fedavg
  - name: local
`

// slurmSweep is one sweep submitted to a real SLURM cluster through the script `fedpipe
// slurm` prints, with a directory remote.
type slurmSweep struct {
	h        *remoteHarness
	c        *slurmtest.Cluster
	manifest string
	remote   string
	script   string
}

func newSlurmSweep(h *remoteHarness, c *slurmtest.Cluster, name, manifest string) *slurmSweep {
	t := h.t
	dir := filepath.Join(h.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := writeManifest(t, dir, manifest)
	remoteDir := h.remotePath(name)
	code, script, errOut := fedpipe(t, "slurm", m, "--remote", remoteDir, "--workers", "2", "--cpu", "1", "--memory", "1Gi",
		"--lease-ttl", "10s", "--time", "10", "--fedpipe", os.Args[0], "--output", filepath.Join(dir, "task-%A_%a.out"))
	if code != 0 {
		t.Fatalf("fedpipe slurm: %s", errOut)
	}
	path := filepath.Join(dir, "sweep.sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return &slurmSweep{h: h, c: c, manifest: m, remote: remoteDir, script: path}
}

// submit submits the script as a user would: sbatch from the manifest's directory, the
// job inheriting the environment (the test binary acts as fedpipe; TMPDIR holds the
// tasks' stores).
func (s *slurmSweep) submit() string {
	return s.c.Submit(filepath.Dir(s.script), s.script, append(s.h.env(), "TMPDIR="+s.h.dir))
}

// output is what array task index of job printed.
func (s *slurmSweep) output(job, index string) string {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(s.script), "task-"+job+"_"+index+".out"))
	if err != nil {
		s.h.t.Fatalf("task %s_%s left no output: %v", job, index, err)
	}
	return string(b)
}

// checkAgainstOneProcess fails unless a fresh store reading the remote runs nothing and
// has every key and digest of a single process's run of the manifest.
func (s *slurmSweep) checkAgainstOneProcess(name string) {
	h := s.h
	ref := h.start("run", s.manifest, "--store", h.store(name+"-ref"), "--json").json()
	after := h.start("run", s.manifest, "--store", h.store(name+"-after"), "--remote", s.remote, "--json").json()
	if n := count(after, "", "ran"); n != 0 {
		h.t.Errorf("after the jobs, a fresh store reading the remote ran %d stages, want 0", n)
	}
	sameOutputs(h.t, name, ref, after)
}

// trainDone matches a stage a task computed to the end (CI=true's per-stage lines).
var trainDone = regexp.MustCompile(`(?m)^\[\d+/\d+\] (train .*) done in `)

// A sweep on a real one-node SLURM cluster, submitted as a user would (`fedpipe slurm … >
// sweep.sh; sbatch sweep.sh`), with a directory remote both array tasks share; the
// scheduler's accounting (sacct -c) is the witness that the tasks ran and how they ended.
//
//  1. Eight train cells: both tasks COMPLETED, every train stage computed by exactly one
//     task, every digest a single process's.
//  2. Two long train stages; task 0 is scancel'ed in the middle of its stage, and the same
//     script is submitted again: the cancelled task is CANCELLED, its fedpipe saved its
//     checkpoint and exited (no process outlives the job, no store is left behind), the
//     stage is taken over from that checkpoint, and every digest is a single process's.
func TestSlurmClusterRunsASweep(t *testing.T) {
	c := slurmtest.Start(t)
	h := &remoteHarness{t: t, dir: t.TempDir()}
	if err := os.Mkdir(filepath.Join(h.dir, "remote"), 0o755); err != nil {
		t.Fatal(err)
	}

	t.Run("split", func(t *testing.T) {
		h := &remoteHarness{t: t, dir: h.dir}
		s := newSlurmSweep(h, c, "split", remoteSweep)
		start := time.Now()
		job := s.submit()
		c.Wait(job, 5*time.Minute)
		t.Logf("job %s: both tasks finished in %.1fs", job, time.Since(start).Seconds())
		tasks := c.Tasks(job)
		acct, lines := c.Accounting()
		t.Logf("sacct -c:\n%s", lines)
		ran := map[string][]string{}
		for _, i := range []string{"0", "1"} {
			task, ok := tasks[i]
			if !ok {
				t.Fatalf("job %s has no array task %s: %v", job, i, tasks)
			}
			if st := acct[task.JobID]; st != "COMPLETED" {
				t.Errorf("sacct -c: array task %s (job %s) is %q, want COMPLETED\n%s", i, task.JobID, st, s.output(job, i))
			}
			for _, m := range trainDone.FindAllStringSubmatch(s.output(job, i), -1) {
				ran[m[1]] = append(ran[m[1]], i)
			}
		}
		if len(ran) != 8 {
			t.Errorf("%d train stages computed, want 8: %v", len(ran), ran)
		}
		for stage, by := range ran {
			if len(by) != 1 {
				t.Errorf("%s was computed by tasks %v, want exactly one", stage, by)
			}
		}
		t.Logf("train stages by task: %v", ran)
		s.checkAgainstOneProcess("split")
		if left, _ := filepath.Glob(filepath.Join(h.dir, "fedpipe-"+job+"-*")); len(left) != 0 {
			t.Errorf("the tasks left their stores behind: %v", left)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		h := &remoteHarness{t: t, dir: h.dir}
		s := newSlurmSweep(h, c, "cancel", slurmCancelSweep)
		start := time.Now()
		job := s.submit()
		// Cancel task 0 once its fedpipe has pushed a checkpoint of the stage it trains, 30
		// rounds or more in.
		store0 := filepath.Join(h.dir, "fedpipe-"+job+"-0")
		ckptDir := filepath.Join(s.remote, "ckpt")
		pid, stage, round := 0, "", 0
		deadline := time.Now().Add(3 * time.Minute)
		for stage == "" {
			if time.Now().After(deadline) {
				t.Fatalf("task 0 pushed no checkpoint within 3 minutes:\n%s", s.output(job, "0"))
			}
			if pid == 0 {
				pid = processWith(store0)
			}
			entries, _ := os.ReadDir(ckptDir)
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(ckptDir, e.Name()))
				var cp struct {
					Round  int    `json:"round"`
					Holder string `json:"holder"`
				}
				if pid != 0 && err == nil && json.Unmarshal(b, &cp) == nil && strings.HasSuffix(cp.Holder, "/"+strconv.Itoa(pid)) && cp.Round >= 30 {
					stage, round = e.Name(), cp.Round
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		if out, err := c.Command("scancel", job+"_0").CombinedOutput(); err != nil {
			t.Fatalf("scancel %s_0: %v\n%s", job, err, out)
		}
		cancelled := time.Now()
		t.Logf("cancelled task 0 (fedpipe pid %d) after it pushed round %d of stage %.12s", pid, round, stage)
		// Its fedpipe saves its checkpoint and exits well before SLURM's KillWait (30 s)
		// would kill it; the script then removes its store.
		for processWith(store0) != 0 {
			if time.Since(cancelled) > 25*time.Second {
				t.Fatalf("the cancelled task's fedpipe (pid %d) is still running 25 s after scancel:\n%s", pid, s.output(job, "0"))
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("the cancelled task's fedpipe exited %.1fs after scancel", time.Since(cancelled).Seconds())
		// The user submits the same script again.
		again := s.submit()
		c.Wait(job, 5*time.Minute)
		c.Wait(again, 5*time.Minute)
		t.Logf("jobs %s and %s finished %.1fs after the first was submitted", job, again, time.Since(start).Seconds())

		acct, lines := c.Accounting()
		t.Logf("sacct -c:\n%s", lines)
		want := map[string]string{job + "_0": "CANCELLED", job + "_1": "COMPLETED", again + "_0": "COMPLETED", again + "_1": "COMPLETED"}
		for _, j := range []string{job, again} {
			for i, task := range c.Tasks(j) {
				if st, w := acct[task.JobID], want[j+"_"+i]; !strings.HasPrefix(st, w) {
					t.Errorf("sacct -c: array task %s_%s (job %s) is %q, want %s", j, i, task.JobID, st, w)
				}
			}
		}
		out0 := s.output(job, "0")
		if !strings.Contains(out0, "interrupted") {
			t.Errorf("the cancelled task does not say it was interrupted:\n%s", out0)
		}
		// The cancelled stage finished somewhere, resumed from the checkpoint task 0
		// pushed (or a later one), not from round 0.
		resumed := regexp.MustCompile(`resuming (train .*) from its checkpoint after round (\d+)`)
		found := false
		for _, task := range [][2]string{{job, "1"}, {again, "0"}, {again, "1"}} {
			for _, m := range resumed.FindAllStringSubmatch(s.output(task[0], task[1]), -1) {
				if r, _ := strconv.Atoi(m[2]); r >= round {
					found = true
					t.Logf("task %s_%s resumed %s after round %d", task[0], task[1], m[1], r)
				}
			}
		}
		if !found {
			t.Errorf("no task resumed the cancelled stage from round ≥ %d:\n%s\n%s\n%s", round,
				s.output(job, "1"), s.output(again, "0"), s.output(again, "1"))
		}
		s.checkAgainstOneProcess("cancel")
		if left, _ := filepath.Glob(filepath.Join(h.dir, "fedpipe-*-*")); len(left) != 0 {
			t.Errorf("the tasks left their stores behind: %v", left)
		}
	})
}

// processWith returns the pid of a process whose command line contains s, or 0.
func processWith(s string) int {
	entries, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s+" ") {
			return pid
		}
	}
	return 0
}
