package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/manifest"
)

// A command is one of fedpipe's verbs. Each is declared beside its run function, in
// cmd_<verb>.go, as cmd/go declares a base.Command: its name, its lines in the overview, its
// usage (how it is called and what it does), the shared flag groups it takes and its own
// flags, and its run function. Adding one is that file and its place in commands: the
// overview (`fedpipe help`), the dispatch, the flag parsing, --help, the exit code and the
// --json form of its errors all come from here (call.start, call.exit).
type command struct {
	name     string
	aliases  []string // other words that run it (`fedpipe --version`)
	overview []string // its lines in the overview, after "  fedpipe "
	// usageLine and long are its --help, before the flags: "Usage: " usageLine (further forms
	// on lines of their own), a blank line, then long, what it does.
	usageLine string
	long      string
	groups    flagGroup // the shared flag groups it declares (flags.go)
	// flags declares the command's flags on fs, the groups g included, and returns its run
	// function bound to them, called once they are parsed with the arguments they leave. It is
	// made by withFlags from the type of the command's flags and its run function.
	flags func(fs *pflag.FlagSet, g flagGroup) func(c *call, args []string) error
	// run, for a command without flags (help), runs it on its arguments as given.
	run func(c *call) error
	// form, where set, is the form of the command its arguments ask for, with its own usage
	// and flags (status --watch; show without --manifest, which is ls); nil: this one.
	form func(args []string) *command
}

// flagValues are a command's flags: declare binds them to fs, with the shared groups g (a
// command whose flags embed commonFlags declares those first with commonFlags.declare).
type flagValues interface {
	declare(fs *pflag.FlagSet, g flagGroup)
}

// withFlags makes a command's flags field from the type F of its flags and its run
// function: each call declares the flags of a new F, and run gets them once parsed, with the
// arguments left (the flag set itself is c.fs, for Changed).
func withFlags[F any, P interface {
	*F
	flagValues
}](run func(c *call, f P, args []string) error) func(*pflag.FlagSet, flagGroup) func(*call, []string) error {
	return func(fs *pflag.FlagSet, g flagGroup) func(*call, []string) error {
		f := P(new(F))
		f.declare(fs, g)
		return func(c *call, args []string) error { return run(c, f, args) }
	}
}

// The shared flag groups of the commands that read or run manifests.
const (
	manifestGroups = storeGroup | inputGroup                      // report, reproduced, diff, show --manifest
	lsGroups       = manifestGroups | onlyRunsGroup               // ls, export, show
	statusGroups   = manifestGroups | remoteGroup | onlyCellGroup // status, serve
	runGroups      = statusGroups | quietGroup | planGroup | workerGroup
	syncGroups     = storeGroup | remoteGroup // push, pull (their other flags: syncFlags)
)

// commands lists every command in the order of the overview. It is set in init, as cmd/go
// sets base.Go.Commands: help, one of them, prints the overview made from it and runs the
// command it names, so the list cannot be a variable's initializer (an initialization cycle).
var commands []*command

func init() {
	commands = []*command{cmdRun, cmdStatus, cmdServe, cmdBench, cmdVerify, cmdReproduced, cmdExport,
		cmdReport, cmdFsck, cmdGC, cmdLs, cmdShow, cmdDiff, cmdVersion, cmdBackend, cmdPush, cmdPull,
		cmdK8s, cmdSlurm, cmdHelp}
}

// cmdHelp is `fedpipe help [COMMAND]`.
var cmdHelp = &command{name: "help", aliases: []string{"-h", "--help"}, run: helpCmd, overview: []string{
	"help [COMMAND]            help for a command"}}

// usage is fedpipe's overview: every command's lines from commands, the exit codes and
// the flags most commands share.
func usage() string {
	var b strings.Builder
	b.WriteString("fedpipe — reproducible personalized federated learning experiments\n\nUsage:\n")
	for _, c := range commands {
		for _, l := range c.overview {
			b.WriteString("  fedpipe " + l + "\n")
		}
	}
	b.WriteString(`
Exit codes: 0 ok, 1 failure, 2 invalid input (manifest, flags, missing data), 3 verify
mismatch, 4 environment (disk full, permission, damaged store), 130 interrupted.
run, status, serve, verify, report, export, ls, diff, show, push, pull and reproduced take
--set KEY=VALUE (-S) to override any manifest field, e.g. -S train.lr=0.05 -S seeds=[0,1].
Run 'fedpipe COMMAND --help' for a command's flags.
`)
	return b.String()
}

// lookup returns the command a word names.
func lookup(word string) (*command, bool) {
	for _, c := range commands {
		if c.name == word {
			return c, true
		}
		for _, a := range c.aliases {
			if a == word {
				return c, true
			}
		}
	}
	return nil, false
}

// call is one invocation of a command.
type call struct {
	name   string   // the command's name (an alias is resolved)
	args   []string // its arguments, after the name
	stdout io.Writer
	stderr io.Writer
	json   bool           // --json was given: errors are also a JSON object on stdout
	out    *jsonOut       // stdout under --json, to know whether the command wrote anything
	fs     *pflag.FlagSet // the command's flags once declared (flags), for Changed and its usage after an error
}

// run runs the command args[0] names on the rest of args and returns fedpipe's exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return exitInvalid
	}
	cmd, ok := lookup(args[0])
	if !ok {
		var names []string
		for _, c := range commands {
			names = append(names, c.name)
		}
		hint := ""
		if best := manifest.Nearest(args[0], names); best != "" {
			hint = fmt.Sprintf("; did you mean %q?", best)
		}
		fmt.Fprintf(stderr, "fedpipe: unknown command %q%s\n\n%s", args[0], hint, usage())
		return exitInvalid
	}
	c := &call{name: cmd.name, args: args[1:], stdout: stdout, stderr: stderr, json: wantsJSON(args[1:])}
	if c.json {
		// Only under --json: a command that clears a terminal checks stdout's file.
		c.out = &jsonOut{w: stdout}
		c.stdout = c.out
	}
	return c.exit(c.start(cmd))
}

// start runs cmd, in the form c's arguments ask for: its flags declared on a new flag set
// and parsed (parseFlags: --help prints its usage, a flag error ends it with exit 2), then
// its run function on the arguments they leave.
func (c *call) start(cmd *command) error {
	if cmd.form != nil {
		if f := cmd.form(c.args); f != nil {
			cmd = f
		}
	}
	if cmd.flags == nil {
		return cmd.run(c)
	}
	fs := c.flags()
	run := cmd.flags(fs, cmd.groups)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\n%s\n\nFlags:\n%s", cmd.usageLine, cmd.long, fs.FlagUsages())
	}
	if err := parseFlags(fs, c.args, c.stdout); err != nil {
		return err
	}
	return run(c, fs.Args())
}

// flags returns a new flag set for the command, writing its errors on stderr.
func (c *call) flags() *pflag.FlagSet {
	c.fs = pflag.NewFlagSet(c.name, pflag.ContinueOnError)
	c.fs.SetOutput(c.stderr)
	return c.fs
}

// exit prints how the command ended, if it failed, and returns the exit code: err's line on
// stderr (the command's usage after it where err asks), and with --json, when the command
// wrote nothing on stdout, the object {"error", "exit_code"} there.
func (c *call) exit(err error) int {
	if err == nil {
		return exitOK
	}
	var e *exitError
	if !errors.As(err, &e) {
		e = failure("fedpipe "+c.name, err).(*exitError)
	}
	if e.msg != "" {
		fmt.Fprintln(c.stderr, strings.TrimRight(e.msg, "\n"))
	}
	if e.hint != "" {
		fmt.Fprintln(c.stderr, e.hint)
	}
	if e.usage && c.fs != nil && c.fs.Usage != nil {
		c.fs.SetOutput(c.stderr)
		c.fs.Usage()
	}
	if c.json && e.code != exitOK && !c.out.wrote {
		text := e.json
		if text == "" {
			text = e.msg
		}
		writeJSON(c.stdout, errorJSON{Error: strings.TrimSpace(text), ExitCode: e.code})
	}
	return e.code
}

// helpCmd is `fedpipe help [COMMAND]`: `help CMD` is `CMD --help`; anything else (help help,
// help -h, --help --help) is the overview. It never recurses into help itself.
func helpCmd(c *call) error {
	if len(c.args) > 0 && !isHelpWord(c.args[0]) && !strings.HasPrefix(c.args[0], "-") {
		return exitErr(run([]string{c.args[0], "--help"}, c.stdout, c.stderr))
	}
	fmt.Fprint(c.stdout, usage())
	return nil
}

// isHelpWord says whether a is one of the ways to ask for help.
func isHelpWord(a string) bool { return a == "help" || a == "-h" || a == "--help" }
