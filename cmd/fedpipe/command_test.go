package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Every command of the table answers --help with its own usage on stdout and exit 0, `help
// NAME` says the same, and the overview lists it; every alias runs the same command.
func TestEveryCommandInTheTable(t *testing.T) {
	overview := usage()
	for _, c := range commandTable() {
		if len(c.overview) == 0 {
			t.Errorf("%s: no line in the overview", c.name)
		}
		for _, l := range c.overview {
			if !strings.Contains(overview, "  fedpipe "+l+"\n") || !strings.HasPrefix(l, c.name) {
				t.Errorf("%s: overview line %q missing or not about it", c.name, l)
			}
		}
		if c.name == "help" {
			continue
		}
		var out, errb bytes.Buffer
		if code := run([]string{c.name, "--help"}, &out, &errb); code != exitOK || !strings.Contains(out.String(), "Usage: fedpipe "+c.name) || errb.Len() != 0 {
			t.Errorf("%s --help: exit %d, stdout %q, stderr %q", c.name, code, out.String(), errb.String())
		}
		var viaHelp bytes.Buffer
		if code := run([]string{"help", c.name}, &viaHelp, &errb); code != exitOK || viaHelp.String() != out.String() {
			t.Errorf("help %s: exit %d, not the same text as %s --help", c.name, code, c.name)
		}
		for _, a := range c.aliases {
			if got, ok := lookup(a); !ok || got.name != c.name {
				t.Errorf("alias %s does not run %s", a, c.name)
			}
		}
	}
	if _, ok := lookup("nonsense"); ok {
		t.Error("lookup found a command that does not exist")
	}
}

// A command's error is printed once on stderr and, under --json, given once as the JSON
// object on stdout with the same text and the exit code; the usage follows where the error
// asks for it.
func TestCallExitPrintsAnErrorOnce(t *testing.T) {
	for _, tc := range []struct {
		json  bool
		err   error
		code  int
		usage bool
	}{
		{false, usageErr("fedpipe ls: expected one MANIFEST argument, got %d", 0), exitInvalid, true},
		{true, usageErr("fedpipe ls: expected one MANIFEST argument, got %d", 0), exitInvalid, true},
		{true, failf(exitEnvironment, "fedpipe: disk full"), exitEnvironment, false},
		{true, exitErr(exitMismatch), exitMismatch, false},
		{true, failure("fedpipe ls", errors.New("no store")), exitFailure, false},
		{false, nil, exitOK, false},
		{true, errDone, exitOK, false},
	} {
		var out, errb bytes.Buffer
		c := &call{name: "ls", stdout: &out, stderr: &errb, json: tc.json}
		if tc.json {
			c.out = &jsonOut{w: &out}
			c.stdout = c.out
		}
		fs := c.flags()
		fs.Usage = func() { fs.Output().Write([]byte("Usage: fedpipe ls\n")) }
		code := c.exit(tc.err)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d", tc.err, code, tc.code)
		}
		var msg, jsonMsg string
		if e, ok := tc.err.(*exitError); ok {
			msg, jsonMsg = e.msg, e.msg
			if e.json != "" {
				jsonMsg = e.json // failure's: without the "fedpipe CMD: " prefix
			}
		}
		if msg != "" && strings.Count(errb.String(), msg) != 1 {
			t.Errorf("%v: stderr %q", tc.err, errb.String())
		}
		if got := strings.Contains(errb.String(), "Usage: fedpipe ls"); got != tc.usage {
			t.Errorf("%v: usage printed %v, want %v", tc.err, got, tc.usage)
		}
		switch {
		case tc.json && tc.code != exitOK:
			var e errorJSON
			if err := json.Unmarshal(out.Bytes(), &e); err != nil || e.ExitCode != tc.code || e.Error != jsonMsg {
				t.Errorf("%v: JSON %q", tc.err, out.String())
			}
		case out.Len() != 0:
			t.Errorf("%v: stdout %q", tc.err, out.String())
		}
	}
}

// Under --json, a command that already printed its JSON result is not given a second
// object when it fails (verify's mismatch, backend --check).
func TestCallExitNoSecondJSON(t *testing.T) {
	var out, errb bytes.Buffer
	c := &call{name: "verify", stderr: &errb, json: true}
	c.out = &jsonOut{w: &out}
	c.stdout = c.out
	writeJSON(c.stdout, map[string]int{"failed": 1})
	if code := c.exit(exitErr(exitMismatch)); code != exitMismatch || strings.Count(out.String(), "{") != 1 {
		t.Errorf("exit %d, stdout %q", code, out.String())
	}
}
