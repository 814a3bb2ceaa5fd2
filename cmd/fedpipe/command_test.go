package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// Every command of the table answers --help with its own usage on stdout and exit 0, `help
// NAME` says the same, and the overview lists it; every alias runs the same command.
func TestEveryCommandInTheTable(t *testing.T) {
	overview := usage()
	for _, c := range commands {
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

// Every command, in each of its forms, declares the shared flags of the groups it names,
// and its help starts with its own usage line.
func TestCommandsDeclareTheirGroups(t *testing.T) {
	marks := map[flagGroup]string{storeGroup: "store", inputGroup: "set", quietGroup: "quiet", planGroup: "dry-run",
		remoteGroup: "remote", workerGroup: "worker", onlyCellGroup: "only", onlyRunsGroup: "only", onlyExpectGroup: "only"}
	all := append([]*command{cmdStatusWatch, cmdShowRuns}, commands...)
	for _, c := range all {
		if c.flags == nil {
			continue // help: no flags
		}
		if !strings.HasPrefix(c.usageLine, "fedpipe "+c.name+" ") && c.usageLine != "fedpipe "+c.name {
			t.Errorf("%s: usage line %q is not about it", c.name, c.usageLine)
		}
		if c.long == "" {
			t.Errorf("%s: no text saying what it does", c.name)
		}
		fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
		c.flags(fs, c.groups)
		for g, flag := range marks {
			if c.groups&g != 0 && fs.Lookup(flag) == nil {
				t.Errorf("%s (%s): names a group with --%s but does not declare it", c.name, c.usageLine, flag)
			}
		}
	}
}

// The forms of status and show are picked by their arguments, each with its own help.
func TestCommandFormsHaveTheirOwnHelp(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		usage     string
		flag, not string // a flag the form's help lists, and one it does not
	}{
		{[]string{"status", "--help"}, "Usage: fedpipe status MANIFEST [flags]\n", "--watch", "--addr"},
		{[]string{"status", "--watch", "--help"}, "Usage: fedpipe status MANIFEST... --watch [flags]\n", "--interval", "--addr"},
		{[]string{"show", "--help"}, "Usage: fedpipe show MANIFEST... [flags]\n", "--csv", "--watch"},
		{[]string{"show", "--manifest", "--help"}, "Usage: fedpipe show MANIFEST --manifest [flags]\n", "--manifest", "--csv"},
	} {
		code, out, errs := fedpipe(t, tc.args...)
		if code != exitOK || errs != "" || !strings.HasPrefix(out, tc.usage) || !strings.Contains(out, tc.flag) || strings.Contains(out, tc.not) {
			t.Errorf("%v: exit %d, stderr %q, stdout:\n%s", tc.args, code, errs, out)
		}
	}
}

// echoFlags are the flags of the command TestACommandIsOneValue declares.
type echoFlags struct {
	commonFlags
	upper bool
}

func (f *echoFlags) declare(fs *pflag.FlagSet, g flagGroup) {
	f.commonFlags.declare(fs, g)
	fs.BoolVar(&f.upper, "upper", false, "print the words in capitals")
}

// A command is one value: its usage, groups and flags beside its run function. The flags are
// parsed for it, --help prints its usage from the value, a flag error ends it with exit 2
// and a pointer to --help, and its run function gets the flags parsed and the arguments left.
func TestACommandIsOneValue(t *testing.T) {
	var got []string
	var gotFlags echoFlags
	echo := &command{name: "echo", usageLine: "fedpipe echo WORD... [flags]", long: "Prints the words.", groups: storeGroup,
		flags: withFlags(func(c *call, f *echoFlags, args []string) error {
			got, gotFlags = args, *f
			return nil
		})}
	start := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		c := &call{name: echo.name, args: args, stdout: &out, stderr: &errb}
		return c.exit(c.start(echo)), out.String(), errb.String()
	}
	code, out, errs := start("--help")
	if code != exitOK || errs != "" || !strings.HasPrefix(out, "Usage: fedpipe echo WORD... [flags]\n\nPrints the words.\n\nFlags:\n") ||
		!strings.Contains(out, "--upper") || !strings.Contains(out, "--store") {
		t.Errorf("--help: exit %d, stderr %q, stdout:\n%s", code, errs, out)
	}
	code, out, errs = start("a", "--uper")
	if want := "fedpipe echo: unknown flag: --uper (did you mean --upper?)\nRun 'fedpipe echo --help' for its flags.\n"; code != exitInvalid || out != "" || errs != want {
		t.Errorf("a misspelt flag: exit %d, stdout %q, stderr %q, want %q", code, out, errs, want)
	}
	if got != nil {
		t.Errorf("run ran after a flag error, with %q", got)
	}
	if code, _, errs = start("a", "--upper", "b", "--store", "s"); code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if strings.Join(got, " ") != "a b" || !gotFlags.upper || gotFlags.store != "s" {
		t.Errorf("run got %q, upper %v, store %q", got, gotFlags.upper, gotFlags.store)
	}
}
