package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/launch"
	"github.com/fedpipe/fedpipe/live"
)

// partDoneManifest is a cell long enough to be interrupted part-way (a few seconds on an idle
// machine), checkpointed every round.
const partDoneManifest = `name: partdone
seeds: [0]
dataset: {name: synthetic, alpha: 1, beta: 1, devices: 10}
partition: {scheme: natural, test_fraction: 0.25}
model: {arch: mlp, hidden: [32]}
train: {rounds: 300, participation: 0.5, local_epochs: 2, batch_size: 16, lr: 0.05, momentum: 0.5, eval_every: 100, checkpoint_every: 1}
methods:
  - name: fedavg
`

// clone makes a checkout of what scripts/reproduce.sh needs in dir: the script, the manifest,
// bin/fedpipe (this test binary as fedpipe) and the kept directory from kept (a folder
// to copy, "" for none).
func reproduceClone(t *testing.T, dir, kept string) {
	t.Helper()
	for _, d := range []string{"scripts", "manifests", "bin", "reproduced"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "reproduce.sh"))
	if err != nil {
		t.Fatal(err)
	}
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"scripts/reproduce.sh":     string(script),
		"manifests/partdone.yaml":  partDoneManifest,
		"bin/fedpipe":              "#!/bin/sh\nFEDPIPE_TEST_MAIN=1 exec " + launch.ShellQuote(self) + " \"$@\"\n",
		"scripts/method-costs.tsv": "# none\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if kept != "" {
		if out, err := exec.Command("cp", "-a", kept+"/.", filepath.Join(dir, "reproduced")).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
	}
}

// reproduceCmd is scripts/reproduce.sh of the clone in dir, for the test manifest's fedavg.
func reproduceCmd(dir string) *exec.Cmd {
	cmd := exec.Command("bash", "scripts/reproduce.sh")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MANIFESTS=manifests/partdone.yaml", "SEEDS=0", "METHODS=fedavg", "KEEP_STORE=1")
	return cmd
}

// keptOutputs returns the output digests of the kept train and evaluate stages.
func keptOutputs(t *testing.T, dir string) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	files, _ := filepath.Glob(filepath.Join(dir, "reproduced", "cells", "partdone", "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Stage   string            `json:"stage"`
			Outputs map[string]string `json:"outputs"`
		}
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		out[e.Stage] = e.Outputs
	}
	return out
}

// TestReproducePartDoneResumesOnAFreshClone: a cell that make reproduce interrupts (SIGTERM)
// leaves its last checkpoint in reproduced/part-done; a fresh clone (no store) with that
// folder resumes the cell from it rather than from round 1, and keeps results bit-identical
// to an uninterrupted run's; once kept, the part-done folder is gone.
func TestReproducePartDoneResumesOnAFreshClone(t *testing.T) {
	if testing.Short() {
		t.Skip("three reproduce.sh runs: minutes on a busy machine")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	root := t.TempDir()
	a, b, c := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")

	// Machine A: interrupted after a few rounds.
	reproduceClone(t, a, "")
	cmd := reproduceCmd(a)
	var aout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &aout, &aout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The stage's journal (rewritten every live.LocalEvery) says which round it is at; the
	// log's progress lines come only every 30 s, after an idle machine has finished the cell.
	log := filepath.Join(a, ".fedpipe-reproduce.log")
	journals := filepath.Join(a, ".fedpipe-reproduce", live.ProgressDir, "*.json")
	deadline := time.Now().Add(10 * time.Minute)
	for at := 0; at < 3; {
		files, _ := filepath.Glob(journals)
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				if j, err := live.Decode(b); err == nil && j.Last().Round > at {
					at = j.Last().Round
				}
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			b, _ := os.ReadFile(log)
			t.Fatalf("the cell never reached round 3:\n%s\n%s", b, aout.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	part := filepath.Join(a, "reproduced", "part-done", "partdone", "fedavg", "seed0")
	if _, err := os.Stat(filepath.Join(part, "cell.txt")); err != nil {
		b, _ := os.ReadFile(log)
		t.Fatalf("no part-done checkpoint kept: %v\n%s\n%s", err, aout.String(), b)
	}
	if ck, _ := filepath.Glob(filepath.Join(part, "ckpt", "*")); len(ck) != 1 {
		t.Fatalf("part-done folder holds %d checkpoints, want 1", len(ck))
	}
	if strings.Contains(aout.String(), "kept "+"manifests/partdone.yaml") {
		t.Fatalf("the cell finished before it was interrupted; the test proves nothing:\n%s", aout.String())
	}

	// Machine B: a fresh clone of what A committed (reproduced/, part-done included), no store.
	reproduceClone(t, b, filepath.Join(a, "reproduced"))
	if out, err := reproduceCmd(b).CombinedOutput(); err != nil {
		t.Fatalf("fresh clone: %v\n%s", err, out)
	} else if !strings.Contains(string(out), "its kept checkpoint seeds") {
		t.Fatalf("the fresh clone did not seed its store from the part-done checkpoint:\n%s", out)
	}
	blog, _ := os.ReadFile(filepath.Join(b, ".fedpipe-reproduce.log"))
	if !regexp.MustCompile(`resum|from its checkpoint|after round [0-9]+`).Match(blog) {
		t.Fatalf("the fresh clone's run did not resume from the checkpoint:\n%s", blog)
	}
	if _, err := os.Stat(filepath.Join(b, "reproduced", "part-done", "partdone", "fedavg", "seed0")); !os.IsNotExist(err) {
		t.Fatalf("the kept cell's part-done folder is still there (%v)", err)
	}

	// Machine C: the same cell uninterrupted.
	reproduceClone(t, c, "")
	if out, err := reproduceCmd(c).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted: %v\n%s", err, out)
	}
	got, want := keptOutputs(t, b), keptOutputs(t, c)
	if len(want) == 0 || want["train fedavg seed=0"]["fingerprints"] == "" {
		t.Fatalf("the uninterrupted run kept %v", want)
	}
	for stage, outs := range want {
		for name, d := range outs {
			if name == "cost" {
				continue // wall times
			}
			if got[stage][name] != d {
				t.Errorf("%s %s: resumed %s, uninterrupted %s", stage, name, got[stage][name], d)
			}
		}
	}
}

// TestReproducePlanScalesTheTimedRound: PLAN=1 projects a cell from the costs table's
// seconds a timed round scaled by cell_implied/implied (FedSelect's timed first round
// trains once, its cell's rounds nearly twice), and from the seconds alone in a table
// without those columns.
func TestReproducePlanScalesTheTimedRound(t *testing.T) {
	for _, tc := range []struct{ costs, want string }{
		{"fedobp\tfedavg\tfedavg\t10.00\t0.00\t1.000\t2.000\n", "(projected 0.83 h)"},
		{"fedobp\tfedavg\tfedavg\t10.00\t0.00\n", "(projected 0.42 h)"},
	} {
		dir := t.TempDir()
		reproduceClone(t, dir, "")
		block := strings.Replace(partDoneManifest, "train: {rounds: 300, participation: 0.5, local_epochs: 2, batch_size: 16, lr: 0.05, momentum: 0.5, eval_every: 100, checkpoint_every: 1}",
			"train:\n  rounds: 300\n  participation: 0.5\n  local_epochs: 2\n  batch_size: 16\n  lr: 0.05\n  eval_every: 100", 1)
		for name, body := range map[string]string{"manifests/partdone.yaml": block, "scripts/method-costs.tsv": "# setting\tlabel\tmethod\tcpu_s_round\tcpu_s_eval\timplied\tcell_implied\n" + tc.costs} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := reproduceCmd(dir)
		cmd.Env = append(cmd.Env, "PLAN=1", "THREADS=2")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "manifests/partdone.yaml fedavg seed 0 "+tc.want) {
			t.Errorf("costs %q: PLAN=1 printed (err %v):\n%s\nwant %s", tc.costs, err, out, tc.want)
		}
	}
}
