package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/manifest"
)

// A command is one of fedpipe's verbs. Adding one is a file cmd_<verb>.go holding its run
// function and an entry in commandTable: the overview (`fedpipe help`), the dispatch, the
// shared flags its flag set declares, the exit code and the --json form of its errors all
// come from here.
type command struct {
	name     string
	aliases  []string  // other words that run it (`fedpipe --version`)
	overview []string  // its lines in the overview, after "  fedpipe "
	flags    flagGroup // the shared flag groups it declares (flags.go); its own are in run
	run      func(c *call) error
}

// The shared flag groups of the commands that read or run manifests.
const (
	manifestFlags = storeGroup | inputGroup                     // report, reproduced, diff, show --manifest
	lsFlags       = manifestFlags | onlyRunsGroup               // ls, export, show
	statusFlags   = manifestFlags | remoteGroup | onlyCellGroup // status, serve
	runFlags      = statusFlags | quietGroup | planGroup | workerGroup
	syncFlags     = storeGroup | remoteGroup // push, pull (their other flags: syncOptions)
)

// commandTable lists every command in the order of the overview. It is a function, not a
// variable, because `help` prints the overview made from it.
func commandTable() []command {
	return []command{
		{name: "run", run: runCmd, flags: runFlags, overview: []string{
			"run MANIFEST [flags]      run every stage whose result is not cached"}},
		{name: "status", run: statusCmd, flags: statusFlags, overview: []string{
			"status MANIFEST [flags]   say which stages are cached and why others would run",
			"status MANIFEST... --watch   follow the runs while they train: state, round, ETA, latest figures"}},
		{name: "serve", run: serveCmd, flags: statusFlags, overview: []string{
			"serve MANIFEST... [--remote URL]   a local web page of the runs, curves growing as they train"}},
		{name: "bench", run: benchCmd, overview: []string{
			"bench [flags]             training/inference throughput of the CNN vs PyTorch"}},
		{name: "verify", run: verifyCmd, flags: manifestFlags | quietGroup | onlyExpectGroup, overview: []string{
			"verify MANIFEST [--run]   compare measured figures with the manifest's expect entries"}},
		{name: "reproduced", run: reproducedCmd, flags: manifestFlags, overview: []string{
			"reproduced MANIFEST...    published cells against the paper-scale results kept in reproduced/"}},
		{name: "export", run: exportCmd, flags: lsFlags, overview: []string{
			"export MANIFEST -o DIR    write the cached tables as Arrow, Parquet and CSV files"}},
		{name: "report", run: reportCmd, flags: manifestFlags, overview: []string{
			"report MANIFEST... -o DIR the cached results as an HTML page, markdown, SVG/PNG/PDF figures"}},
		{name: "fsck", run: fsckCmd, flags: storeGroup, overview: []string{
			"fsck [--repair|--salvage] re-hash every blob; check (and heal) every result and ref"}},
		{name: "gc", run: gcCmd, flags: storeGroup, overview: []string{
			"gc [MANIFEST...]          delete results no given manifest (or recent run) uses; --remote URL: in a remote"}},
		{name: "ls", run: lsCmd, flags: lsFlags, overview: []string{
			"ls MANIFEST...            one row per run: swept parameters, cached/stale/missing, metrics"}},
		{name: "show", run: showCmd, flags: manifestFlags, overview: []string{
			"show MANIFEST --manifest  the effective manifest (file + --set) recorded with the results"}},
		{name: "diff", run: diffCmd, flags: manifestFlags, overview: []string{
			"diff A B                  parameters and metrics side by side (manifests, cells, last run)"}},
		{name: "version", aliases: []string{"--version"}, run: versionCmd, overview: []string{
			"version                   version, commit, backend, key scheme"}},
		{name: "backend", run: backendCmd, overview: []string{
			"backend [BACKEND]         what a backend resolves to: its id, the XLA plugin and environment"}},
		{name: "push", run: pushCmd, flags: syncFlags, overview: []string{
			"push MANIFEST... --remote URL   upload cached results to a shared S3 remote"}},
		{name: "pull", run: pullCmd, flags: syncFlags, overview: []string{
			"pull MANIFEST... --remote URL   download a remote's results into the local store"}},
		{name: "k8s", run: k8sCmd, overview: []string{
			"k8s MANIFEST --image IMG --remote URL --workers N   a Kubernetes Indexed Job of workers"}},
		{name: "slurm", run: slurmCmd, overview: []string{
			"slurm MANIFEST --remote URL --workers N             an sbatch --array script of workers"}},
		{name: "help", aliases: []string{"-h", "--help"}, run: helpCmd, overview: []string{
			"help [COMMAND]            help for a command"}},
	}
}

// usage is fedpipe's overview: every command's lines from commandTable, the exit codes and
// the flags most commands share.
func usage() string {
	var b strings.Builder
	b.WriteString("fedpipe — reproducible personalized federated learning experiments\n\nUsage:\n")
	for _, c := range commandTable() {
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
func lookup(word string) (command, bool) {
	for _, c := range commandTable() {
		if c.name == word {
			return c, true
		}
		for _, a := range c.aliases {
			if a == word {
				return c, true
			}
		}
	}
	return command{}, false
}

// call is one invocation of a command.
type call struct {
	name   string    // the command's name (an alias is resolved)
	groups flagGroup // the shared flag groups its table entry names (commonFlags.register)
	args   []string  // its arguments, after the name
	stdout io.Writer
	stderr io.Writer
	json   bool           // --json was given: errors are also a JSON object on stdout
	out    *jsonOut       // stdout under --json, to know whether the command wrote anything
	fs     *pflag.FlagSet // the command's flags once declared (flags), for its usage after an error
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
		for _, c := range commandTable() {
			names = append(names, c.name)
		}
		hint := ""
		if best := manifest.Nearest(args[0], names); best != "" {
			hint = fmt.Sprintf("; did you mean %q?", best)
		}
		fmt.Fprintf(stderr, "fedpipe: unknown command %q%s\n\n%s", args[0], hint, usage())
		return exitInvalid
	}
	c := &call{name: cmd.name, groups: cmd.flags, args: args[1:], stdout: stdout, stderr: stderr, json: wantsJSON(args[1:])}
	if c.json {
		// Only under --json: a command that clears a terminal checks stdout's file.
		c.out = &jsonOut{w: stdout}
		c.stdout = c.out
	}
	return c.exit(cmd.run(c))
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
