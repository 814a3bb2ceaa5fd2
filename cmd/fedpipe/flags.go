package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/storedir"
	"github.com/fedpipe/fedpipe/manifest"
)

// parseFlags parses a command's flags. `--help` prints the command's usage (fs.Usage, which
// writes to fs.Output()) on stdout and ends the command with exit 0 (errDone); a flag error
// (an unknown flag, a value that does not parse, a missing value) ends it with exit 2 and a
// pointer to --help, as does a value no command can mean (checkFlagValues).
func parseFlags(fs *pflag.FlagSet, args []string, stdout io.Writer) error {
	out := fs.Output()
	fs.SetOutput(stdout)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if err == nil {
		return checkFlagValues(fs)
	}
	if errors.Is(err, pflag.ErrHelp) {
		return errDone
	}
	msg := fmt.Sprintf("fedpipe %s: %v", fs.Name(), err)
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		var names []string
		fs.VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		if near := manifest.Nearest(name, names); near != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", near)
		}
	}
	return &exitError{code: exitInvalid, msg: msg,
		hint: fmt.Sprintf("Run 'fedpipe %s --help' for its flags.", fs.Name())}
}

// wantsJSON says whether args ask for --json, for errors found before or while the flags are
// parsed.
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
}

// errorJSON is what a command given --json prints on stdout when it fails.
type errorJSON struct {
	Error    string `json:"error"`
	ExitCode int    `json:"exit_code"`
}

// jsonOut is the stdout of a command given --json: it records whether anything was
// written, so that call.exit prints a failure as JSON only where the command printed none.
type jsonOut struct {
	w     io.Writer
	wrote bool
}

func (j *jsonOut) Write(p []byte) (int, error) {
	j.wrote = j.wrote || len(p) > 0
	return j.w.Write(p)
}

// storeFlags choose the store a command uses (--store) and how long it waits for another
// fedpipe holding it (--lock-timeout); every command that opens a store declares them here.
type storeFlags struct {
	store       string
	lockTimeout time.Duration
}

// register declares --store and --lock-timeout on fs.
func (s *storeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.store, "store", "", "store directory (default $FEDPIPE_STORE, else .fedpipe found from the working directory or the manifest's directory up to the repository root; docs/commands.md)")
	fs.DurationVar(&s.lockTimeout, "lock-timeout", artifacts.DefaultLockTimeout, "how long to wait for another fedpipe using the same store (it is named at once)")
}

// options are the artifacts.Options the store is opened with; logf receives its notices.
func (s *storeFlags) options(logf func(string, ...any)) artifacts.Options {
	return artifacts.Options{LockTimeout: s.lockTimeout, Logf: logf}
}

// reader opens, read-only, the store a read-only command reads for the manifest argument
// manifestArg (findStore: never created, never waited for: a store a run holds is read from
// a snapshot); it names the store on stderr unless --store chose it.
func (s *storeFlags) reader(manifestArg string, stderr io.Writer) (*artifacts.Store, error) {
	dir, err := findStore(s.store, manifestArg, stderr)
	if err != nil {
		return nil, err
	}
	return artifacts.OpenReader(dir, s.options(nil))
}

// writeDir is the store a command that writes uses for manifestArg (storedir.ForRun: the
// one found, else a new .fedpipe where artifacts.DefaultDir says).
func (s *storeFlags) writeDir(manifestArg string) string {
	return storedir.ForRun(s.store, manifestArg)
}

// findStore returns the store a read-only command reads for the --store value flag and the
// manifest argument manifestArg (storedir.Find: never created; where none is found, invalid
// input saying where it looked), naming it on stderr unless --store chose it.
func findStore(flag, manifestArg string, stderr io.Writer) (string, error) {
	c, err := storedir.Find(flag, manifestArg)
	if err != nil {
		return "", err
	}
	if c.How != "--store" {
		fmt.Fprintf(stderr, "fedpipe: reading store %s (%s)\n", c.Dir, c.How)
	}
	return c.Dir, nil
}

// flagGroup is a set of the flag groups commands share. A command's declaration names the
// groups its flag set declares (commonFlags.declare), as cmd/go adds its build flags to the
// commands that take them; a command's own flags are declared beside it, by its flags'
// declare method.
type flagGroup uint

const (
	storeGroup      flagGroup = 1 << iota // --store, --lock-timeout
	inputGroup                            // --data, --backend, --json, --set and the manifest bounds (--max-*)
	quietGroup                            // --quiet
	planGroup                             // --dry-run, --together, --lockstep
	remoteGroup                           // --remote
	workerGroup                           // --worker, --shard, --lease-ttl
	onlyCellGroup                         // --only: one cell of a table
	onlyRunsGroup                         // --only: the runs read
	onlyExpectGroup                       // --only: verify's expect entries
)

// commonFlags hold the values of every shared flag group; a command's run function reads
// the ones its groups declared. They are the flags of a command that has no others, and
// the flags of one that has embed them.
type commonFlags struct {
	storeFlags
	data    string
	backend string
	json    bool
	quiet   bool
	dryRun  bool
	set     []string
	remote  remoteFlags
	only    []string
	// together and lockstep: how many stages run at the same time, and whether their
	// clients train in lockstep (run only; together.go).
	together int
	lockstep string
}

// declare declares on fs the flags of the groups in g, bound to c.
func (c *commonFlags) declare(fs *pflag.FlagSet, g flagGroup) {
	if g&storeGroup != 0 {
		c.storeFlags.register(fs)
	}
	if g&inputGroup != 0 {
		fs.StringVar(&c.data, "data", "", "directory holding datasets (default $FEDPIPE_DATA, else system locations)")
		fs.StringVar(&c.backend, "backend", "", "GoMLX backend (default $GOMLX_BACKEND, else the built-in CPU backend)")
		fs.BoolVar(&c.json, "json", false, "print one JSON object instead of text")
		registerSet(fs, &c.set)
		registerLimits(fs)
	}
	if g&quietGroup != 0 {
		fs.BoolVarP(&c.quiet, "quiet", "q", false, "no progress output, and no tables (run: the closing line alone)")
	}
	if g&planGroup != 0 {
		fs.BoolVarP(&c.dryRun, "dry-run", "n", false, "print the plan (what would run, and why) and stop")
		fs.IntVar(&c.together, "together", 0, "train up to N runs at the same time (default: 1 on the CPU backends; on XLA as many as memory allows, at most 16)")
		fs.StringVar(&c.lockstep, "lockstep", "auto", "train the clients of the runs training together in one compiled step: auto (on XLA), on, off")
	}
	if g&remoteGroup != 0 {
		c.remote.register(fs)
	}
	if g&workerGroup != 0 {
		c.remote.registerWorker(fs)
	}
	only := ""
	switch {
	case g&onlyCellGroup != 0:
		only = "only the runs of these method labels (comma-separated) and the stages they need, without the report: one cell of a table"
	case g&onlyRunsGroup != 0:
		only = "only the runs of these method labels (comma-separated) and the stages they need, without the report"
	case g&onlyExpectGroup != 0:
		only = "only the expect entries of these method labels (comma-separated); with --run, only their runs (and those they are compared with)"
	}
	if only != "" {
		fs.StringSliceVar(&c.only, "only", nil, only)
	}
}

// registerSet adds --set/-S, the manifest overrides, to a command's flags.
func registerSet(fs *pflag.FlagSet, sets *[]string) {
	fs.StringArrayVarP(sets, "set", "S", nil, "override a manifest field: `KEY=VALUE` by dotted path, YAML value (train.lr=0.05, seeds=[0,1], methods.fedobp.params.q=0.9995, grid.train.lr=[0.01,0.1]); repeatable")
}
