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
	for _, cmd := range []string{"run", "status", "verify", "export", "report", "fsck", "gc", "bench"} {
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
