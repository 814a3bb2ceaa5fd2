package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 18, bug 1: two manifests sharing a name (a copied YAML) are two sets of runs, kept
// apart by content, never averaged as if they were seeds; the clash is reported.
func TestReportKeepsManifestsWithOneNameApart(t *testing.T) {
	dir := t.TempDir()
	store, out := filepath.Join(dir, "store"), filepath.Join(dir, "out")
	var paths []string
	for _, v := range []struct{ sub, lr string }{{"a", "0.05"}, {"b", "0.2"}} {
		sub := filepath.Join(dir, v.sub)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		body := strings.Replace(tinyManifest, "lr: 0.05, eval_every", "lr: "+v.lr+", eval_every", 1)
		m := writeManifest(t, sub, body)
		if code, stdout, errs := fedpipe(t, "run", m, "--store", store, "--quiet"); code != exitOK {
			t.Fatalf("run %s: exit %d\n%s%s", v.sub, code, stdout, errs)
		}
		paths = append(paths, m)
	}
	code, stdout, errs := fedpipe(t, append([]string{"report", "--store", store, "-o", out}, paths...)...)
	if code != exitOK || !strings.Contains(stdout, "4 of 4 runs computed") {
		t.Fatalf("report: exit %d\n%s%s", code, stdout, errs)
	}
	if !strings.Contains(errs, `share the name "tiny"`) {
		t.Errorf("the name clash is not reported:\n%s", errs)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md), "n=2") {
		t.Errorf("runs of two manifests averaged as seeds:\n%s", md)
	}
	runs, err := os.ReadFile(filepath.Join(out, "tables", "runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(runs)), "\n")
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		if seen[l] {
			t.Errorf("runs.csv has a duplicate row %q", l)
		}
		seen[l] = true
	}
	if len(lines) != 1+4 {
		t.Errorf("runs.csv: want 4 rows, got\n%s", runs)
	}
}

// Issue 18, bug 2: a flag error is printed with a pointer to --help, on every subcommand,
// exit 2 (it used to exit 2 with no output at all).
func TestFlagErrorsAreExplained(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--bogus", "m.yaml"},
		{"status", "m.yaml", "--lock-timeout", "abc"},
		{"report", "m.yaml", "--store"},
		{"verify", "-z", "m.yaml"},
		{"export", "m.yaml", "--bogus"},
		{"fsck", "--nope"},
		{"gc", "--keep-recent", "x"},
		{"bench", "--steps", "q"},
		{"ls", "m.yaml", "--nope"},
		{"diff", "a.yaml", "--nope"},
		{"version", "--nope"},
		{"backend", "--nope"},
	} {
		code, stdout, errs := fedpipe(t, args...)
		if code != exitInvalid {
			t.Errorf("%v: exit %d, want %d", args, code, exitInvalid)
		}
		if !strings.Contains(errs, "fedpipe "+args[0]+": ") || !strings.Contains(errs, "'fedpipe "+args[0]+" --help'") {
			t.Errorf("%v: stderr does not explain the error and point to --help:\n%q", args, errs)
		}
		if stdout != "" {
			t.Errorf("%v: stdout %q", args, stdout)
		}
	}
	// With --json the error is also a JSON object on stdout.
	code, stdout, _ := fedpipe(t, "status", "m.yaml", "--json", "--bogus")
	var e errorJSON
	if err := json.Unmarshal([]byte(stdout), &e); code != exitInvalid || err != nil || !strings.Contains(e.Error, "--bogus") || e.ExitCode != exitInvalid {
		t.Errorf("--json flag error: exit %d, %q (%v)", code, stdout, err)
	}
}

// Issue 18: with --json, usage errors (a missing argument) come out as JSON too.
func TestJSONUsageErrorsAreJSON(t *testing.T) {
	for _, args := range [][]string{{"run", "--json"}, {"status", "a.yaml", "b.yaml", "--json"}, {"ls", "--json"}, {"diff", "--json"}, {"export", "--json"}} {
		code, stdout, _ := fedpipe(t, args...)
		var e errorJSON
		if err := json.Unmarshal([]byte(stdout), &e); err != nil || code != exitInvalid || e.ExitCode != exitInvalid || !strings.HasPrefix(e.Error, "fedpipe "+args[0]+": expected") {
			t.Errorf("%v: exit %d, stdout %q (%v)", args, code, stdout, err)
		}
	}
}

// Issue 18: with --json, errors after the flags (a missing manifest) come out as JSON too.
func TestJSONErrorsAreJSON(t *testing.T) {
	dir := t.TempDir()
	for _, cmd := range []string{"run", "status", "verify", "export", "report"} {
		args := []string{cmd, filepath.Join(dir, "missing.yaml"), "--store", filepath.Join(dir, "store"), "--json"}
		if cmd == "export" || cmd == "report" {
			args = append(args, "-o", filepath.Join(dir, "out"))
		}
		code, stdout, errs := fedpipe(t, args...)
		var e errorJSON
		if err := json.Unmarshal([]byte(stdout), &e); err != nil || e.ExitCode != code || !strings.Contains(e.Error, "missing.yaml") {
			t.Errorf("%s --json: exit %d, stdout %q (%v), stderr %q", cmd, code, stdout, err, errs)
		}
		if code != exitInvalid {
			t.Errorf("%s: exit %d, want %d", cmd, code, exitInvalid)
		}
	}
}

// Issue 18, bug 3: asking for help about help printed nothing but a stack overflow; and a
// subcommand's --help goes to stdout (it is the output asked for), exit 0.
func TestHelpAboutHelp(t *testing.T) {
	for _, args := range [][]string{{"help", "--help"}, {"help", "-h"}, {"--help", "--help"}, {"-h", "help"}, {"help", "help"}, {"help"}} {
		code, stdout, errs := fedpipe(t, args...)
		if code != exitOK || !strings.Contains(stdout, "Usage:") || errs != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, errs)
		}
	}
	for _, cmd := range []string{"run", "status", "verify", "export", "report", "fsck", "gc", "bench", "ls", "diff", "version", "backend"} {
		for _, h := range []string{"--help", "-h"} {
			code, stdout, errs := fedpipe(t, cmd, h)
			if code != exitOK || !strings.HasPrefix(stdout, "Usage: fedpipe "+cmd) || errs != "" {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q", cmd, h, code, stdout, errs)
			}
		}
		if code, stdout, _ := fedpipe(t, "help", cmd); code != exitOK || !strings.HasPrefix(stdout, "Usage: fedpipe "+cmd) {
			t.Errorf("help %s: exit %d, stdout %q", cmd, code, stdout)
		}
	}
}

// Issue 18: methods that select nothing write no (empty) selection table.
func TestNoEmptySelectionTable(t *testing.T) {
	dir := t.TempDir()
	m := writeManifest(t, dir, tinyManifest)
	r := runJSON(t, "run", m, "--store", filepath.Join(dir, "store"))
	trains := 0
	for _, s := range r.Stages {
		if s.Kind != "train" {
			continue
		}
		trains++
		if _, ok := s.Outputs["selection"]; ok {
			t.Errorf("%s writes a selection table", s.Name)
		}
		if _, ok := s.Outputs["metrics"]; !ok {
			t.Errorf("%s has no metrics: %v", s.Name, s.Outputs)
		}
	}
	if trains != 2 {
		t.Errorf("%d train stages, want 2", trains)
	}
}

// Issue 18: a stale reason compares with the same manifest file's last run, never with a
// copy of it that shares its name (an untouched file said "train.lr 0.1 → 0.05").
func TestStaleReasonIsThisManifests(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	a := writeManifest(t, filepath.Join(dir), tinyManifest)
	if err := os.MkdirAll(filepath.Join(dir, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := writeManifest(t, filepath.Join(dir, "b"), strings.Replace(tinyManifest, "lr: 0.05, eval_every", "lr: 0.1, eval_every", 1))
	if code, _, errs := fedpipe(t, "run", b, "--store", store, "--quiet"); code != exitOK {
		t.Fatalf("run b: %d %s", code, errs)
	}
	code, stdout, errs := fedpipe(t, "status", a, "--store", store)
	if code != exitOK {
		t.Fatalf("status a: %d %s", code, errs)
	}
	if strings.Contains(stdout, "0.1 → 0.05") || !strings.Contains(stdout, "never ran") {
		t.Errorf("status of an untouched manifest compares with its copy:\n%s", stdout)
	}
	// Its own change is still explained.
	if code, _, errs := fedpipe(t, "run", a, "--store", store, "--quiet"); code != exitOK {
		t.Fatalf("run a: %d %s", code, errs)
	}
	if err := os.WriteFile(a, []byte(strings.Replace(tinyManifest, "lr: 0.05, eval_every", "lr: 0.02, eval_every", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stdout, _ = fedpipe(t, "status", a, "--store", store); !strings.Contains(stdout, "train.lr 0.05 → 0.02") {
		t.Errorf("status after an edit:\n%s", stdout)
	}
}
