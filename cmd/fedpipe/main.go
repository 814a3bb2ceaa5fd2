// Command fedpipe runs personalized-federated-learning experiments described by a manifest
// as a cached DAG of stages. See README.md.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/train"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailure     = 1
	exitInvalid     = 2
	exitInterrupted = 130
)

const usage = `fedpipe — reproducible personalized federated learning experiments

Usage:
  fedpipe run MANIFEST [flags]      run every stage whose result is not cached
  fedpipe status MANIFEST [flags]   say which stages are cached and why others would run
  fedpipe status MANIFEST... --watch   follow the runs while they train: state, round, ETA, latest figures
  fedpipe serve MANIFEST... [--remote URL]   a local web page of the runs, curves growing as they train
  fedpipe bench [flags]             training/inference throughput of the CNN vs PyTorch
  fedpipe verify MANIFEST [--run]   compare measured figures with the manifest's expect entries
  fedpipe reproduced MANIFEST...    published cells against the paper-scale results kept in reproduced/
  fedpipe export MANIFEST -o DIR    write the cached tables as Arrow, Parquet and CSV files
  fedpipe report MANIFEST... -o DIR the cached results as an HTML page, markdown, SVG/PNG/PDF figures
  fedpipe fsck [--repair|--salvage] re-hash every blob; check (and heal) every result and ref
  fedpipe gc [MANIFEST...]          delete results no given manifest (or recent run) uses; --remote URL: in a remote
  fedpipe ls MANIFEST...            one row per run: swept parameters, cached/stale/missing, metrics
  fedpipe show MANIFEST --manifest  the effective manifest (file + --set) recorded with the results
  fedpipe diff A B                  parameters and metrics side by side (manifests, cells, last run)
  fedpipe version                   version, commit, backend, key scheme
  fedpipe backend [BACKEND]         what a backend resolves to: its id, the XLA plugin and environment
  fedpipe push MANIFEST... --remote URL   upload cached results to a shared S3 remote
  fedpipe pull MANIFEST... --remote URL   download a remote's results into the local store
  fedpipe k8s MANIFEST --image IMG --remote URL --workers N   a Kubernetes Indexed Job of workers
  fedpipe slurm MANIFEST --remote URL --workers N             an sbatch --array script of workers
  fedpipe help [COMMAND]            help for a command

Exit codes: 0 ok, 1 failure, 2 invalid input (manifest, flags, missing data), 3 verify
mismatch, 130 interrupted.
run, status, verify, report, export, ls, diff, show, push, pull and reproduced take
--set KEY=VALUE (-S) to override any manifest field, e.g. -S train.lr=0.05 -S seeds=[0,1].
Run 'fedpipe COMMAND --help' for a command's flags.
`

// The executor's context is what the stage implementations are written against.
var _ stages.Context = (*pipeline.StageContext)(nil)

func main() {
	setGCPercent()
	setMemoryLimit()
	reexecForXLA(os.Args[1:])
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// gcPercent is Go's GOGC for fedpipe unless the environment sets one: a collection when the
// heap has grown by half (Go's default: doubled) over what survived the last. A federated
// run's heap is mostly long-lived (the dataset, every client's models), so the default let a
// 100-client FedOBP run reach about twice its live heap in resident memory; half that growth
// costs a few more collections of little garbage.
const gcPercent = 50

// setGCPercent applies gcPercent unless $GOGC is set.
func setGCPercent() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitInvalid
	}
	cmd, rest := args[0], args[1:]
	if _, wrapped := stdout.(*jsonOut); !wrapped && wantsJSON(rest) {
		return runWithJSONErrors(args, stdout, stderr)
	}
	switch cmd {
	case "run", "status":
		if cmd == "status" && wantsWatch(rest) {
			return statusWatch(rest, stdout, stderr)
		}
		return runOrStatus(cmd, rest, stdout, stderr)
	case "serve":
		return serveCmd(rest, stdout, stderr)
	case "bench":
		return bench(rest, stdout, stderr)
	case "fsck":
		return fsck(rest, stdout, stderr)
	case "verify":
		return verifyCmd(rest, stdout, stderr)
	case "reproduced":
		return reproducedCmd(rest, stdout, stderr)
	case "export":
		return export(rest, stdout, stderr)
	case "report":
		return reportCmd(rest, stdout, stderr)
	case "gc":
		return gc(rest, stdout, stderr)
	case "ls":
		return lsCmd("ls", rest, stdout, stderr)
	case "show":
		return showCmd(rest, stdout, stderr)
	case "diff":
		return diffCmd(rest, stdout, stderr)
	case "backend":
		return backendCmd(rest, stdout, stderr)
	case "version", "--version":
		return versionCmd(rest, stdout, stderr)
	case "push", "pull":
		return pushPull(cmd, rest, stdout, stderr)
	case "k8s", "slurm":
		return launcher(cmd, rest, stdout, stderr)
	case "help", "-h", "--help":
		// `help CMD` is `CMD --help`; anything else (help help, help -h, --help --help)
		// is the overview. Never recurse into help itself.
		if len(rest) > 0 && !isHelpWord(rest[0]) && !strings.HasPrefix(rest[0], "-") {
			return run([]string{rest[0], "--help"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "fedpipe: unknown command %q\n\n%s", cmd, usage)
	return exitInvalid
}

// isHelpWord says whether a is one of the ways to ask for help.
func isHelpWord(a string) bool { return a == "help" || a == "-h" || a == "--help" }

// commonFlags are the flags most commands share (store, data, backend, overrides, output
// format); each command registers the ones it takes (register).
type commonFlags struct {
	store       string
	data        string
	backend     string
	json        bool
	quiet       bool
	dryRun      bool
	lockTimeout time.Duration
	set         []string
	remote      remoteFlags
	only        []string
}

func (c *commonFlags) register(fs *pflag.FlagSet, cmd string) {
	fs.StringVar(&c.store, "store", "", "store directory (default $FEDPIPE_STORE, else .fedpipe found from the working directory or the manifest's directory up to the repository root; docs/commands.md)")
	fs.StringVar(&c.data, "data", "", "directory holding datasets (default $FEDPIPE_DATA, else system locations)")
	fs.StringVar(&c.backend, "backend", "", "GoMLX backend (default $GOMLX_BACKEND, else the built-in CPU backend)")
	fs.BoolVar(&c.json, "json", false, "print one JSON object instead of text")
	fs.DurationVar(&c.lockTimeout, "lock-timeout", 30*time.Second, "how long to wait for another fedpipe using the same store")
	registerSet(fs, &c.set)
	if cmd == "run" || cmd == "verify" {
		fs.BoolVarP(&c.quiet, "quiet", "q", false, "no progress output")
	}
	if cmd == "run" {
		fs.BoolVarP(&c.dryRun, "dry-run", "n", false, "print the plan (what would run, and why) and stop")
	}
	registerLimits(fs)
	switch cmd {
	case "run", "status":
		c.remote.register(fs, cmd)
		fs.StringSliceVar(&c.only, "only", nil, "only the runs of these method labels (comma-separated) and the stages they need, without the report: one cell of a table")
	case "ls", "export":
		fs.StringSliceVar(&c.only, "only", nil, "only the runs of these method labels (comma-separated) and the stages they need, without the report")
	case "verify":
		fs.StringSliceVar(&c.only, "only", nil, "only the expect entries of these method labels (comma-separated); with --run, only their runs (and those they are compared with)")
	}
}

func runOrStatus(cmd string, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet(cmd, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var f commonFlags
	f.register(fs, cmd)
	if cmd == "status" {
		new(watchFlags).registerWatch(fs) // listed in its help; statusWatch honours them
	}
	fs.Usage = func() {
		what := "Runs every stage of MANIFEST whose result is not in the store, in dependency order, and prints the report."
		if cmd == "status" {
			what = "Says, for every stage of MANIFEST, whether its result is cached, and if not, why it would run."
		}
		fmt.Fprintf(fs.Output(), "Usage: fedpipe %s MANIFEST [flags]\n\n%s\n\nFlags:\n%s", cmd, what, fs.FlagUsages())
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if err := watchOnly(fs); cmd == "status" && err != nil {
		fmt.Fprintf(stderr, "fedpipe status: %v\n", err)
		return exitInvalid
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "fedpipe %s: expected one MANIFEST argument, got %d\n", cmd, fs.NArg())
		fs.Usage()
		return exitInvalid
	}
	path := fs.Arg(0)
	fail := func(err error) int { return failure("fedpipe", err, f.json, stdout, stderr) }

	// Everything that can be wrong with the input is checked before the store is opened,
	// so invalid input never writes anything.
	loader := &data.Loader{DataDir: f.data}
	g, backend, err := loadGraphSet(path, f.set, loader, f.backend)
	if err == nil && len(f.only) > 0 {
		g, err = pipeline.Only(g, f.only)
	}
	if err != nil {
		return fail(err)
	}
	m := g.Manifest
	split, err := f.remote.split()
	if err != nil {
		fmt.Fprintf(stderr, "fedpipe %s: %v\n", cmd, err)
		return exitInvalid
	}

	progress := newProgress(stderr, f.quiet || f.json)
	logs := &pipeline.LogCapture{}
	ctx, stop := interruptContext(stderr)
	defer stop()
	rem, err := f.remote.open(ctx, logs.Logf)
	if err != nil {
		fmt.Fprintf(stderr, "fedpipe: %v\n", err)
		return remoteExit(err)
	}
	dir := runStore(f.store, path)
	if cmd == "status" {
		found, err := findStore(f.store, path, stderr)
		switch {
		case err == nil:
			dir = found
		case rem == nil:
			return fail(err) // status never creates a store
		}
	}
	// Store notices (a wait for another process's lock first of all) are printed at once.
	logs.Next = func(s string) {
		switch {
		case !f.json:
			progress.Logf("store: %s", s)
		case strings.Contains(s, "in use"):
			fmt.Fprintf(stderr, "fedpipe: store: %s\n", s) // never silent, even with --json
		}
	}
	open := artifacts.Open
	if cmd == "status" || f.dryRun {
		open = artifacts.OpenReader // never waits for a run that holds the store
	}
	openDir := dir
	if (f.dryRun || cmd == "status") && !hasStore(dir) { // neither creates a store: they plan against an empty one
		tmp, err := os.MkdirTemp("", "fedpipe-dry-run-")
		if err != nil {
			return fail(err)
		}
		defer os.RemoveAll(tmp)
		openDir = tmp
	}
	store, err := open(openDir, artifacts.Options{LockTimeout: f.lockTimeout, Logf: logs.Logf})
	if err != nil {
		return fail(err)
	}
	defer func() {
		// A store that cannot close cleanly (a disk filled meanwhile) says why; its log
		// keeps what was written.
		if err := store.Close(); err != nil {
			fmt.Fprintf(stderr, "fedpipe: %v\n", err)
		}
	}()

	plan, err := pipeline.Plan(g, store, logs)
	if err != nil {
		return fail(err)
	}
	if cmd == "status" || f.dryRun {
		if rem != nil {
			if err := pipeline.MarkRemote(ctx, plan, rem); err != nil {
				return fail(err)
			}
		}
		return printPlan(cmd, m, dir, backend, plan, f.json, stdout)
	}

	ex := &pipeline.Executor{Store: store, Stages: pipeline.StageFuncs(stages.Funcs(&stages.Env{Loader: loader, Backend: backend})),
		Progress: progress, Remote: rem, Split: split, Build: buildInfo(backend)}
	start := time.Now()
	results, err := ex.Execute(ctx, g, plan)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "\nfedpipe: interrupted; finished stages and train checkpoints are saved. Resume with:\n  fedpipe run %s\n", shellJoin(args))
			return exitInterrupted
		}
		return fail(err)
	}
	if err := recordManifest(store, g); err != nil {
		return fail(err)
	}
	reportMD := ""
	if last := results[len(results)-1]; last.Kind == manifest.KindReport {
		if d, err := artifacts.ParseDigest(last.Outputs["report.md"]); err == nil {
			if b, err := store.Get(d); err == nil {
				reportMD = string(b)
			}
		}
	}
	ran, skipped, fetched := 0, 0, 0
	for _, r := range results {
		switch {
		case r.State == pipeline.StateRan:
			ran++
		case r.State == pipeline.StateSkipped:
			skipped++
		case r.Reason == pipeline.ReasonFetched:
			fetched++
		}
	}
	if f.json {
		out := map[string]any{"manifest": path, "store": dir, "backend": model.BackendID(backend),
			"seconds": time.Since(start).Seconds(), "stages": results, "report": reportMD}
		if rem != nil {
			out["remote"], out["worker"] = rem.String(), rem.Holder()
		}
		return writeJSON(stdout, out)
	}
	where := "store " + dir
	if rem != nil {
		where += ", remote " + rem.String()
	}
	fmt.Fprintf(stdout, "%s\n%d of %d stages ran, %d cached", reportMD, ran, len(results), len(results)-ran-skipped-fetched)
	if fetched > 0 {
		fmt.Fprintf(stdout, ", %d fetched from the remote", fetched)
	}
	if skipped > 0 {
		fmt.Fprintf(stdout, ", %d left to other shards", skipped)
	}
	fmt.Fprintf(stdout, " (%s, %s)\n", fmtSeconds(time.Since(start)), where)
	return exitOK
}

func fmtSeconds(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

type planJSON struct {
	Kind    string  `json:"kind"`
	Name    string  `json:"name"`
	Key     string  `json:"key"`
	State   string  `json:"state"`
	Reason  string  `json:"reason,omitempty"`
	Seconds float64 `json:"seconds"`
}

func printPlan(cmd string, m *manifest.Manifest, dir, backend string, plan []pipeline.PlanEntry, asJSON bool, w io.Writer) int {
	var rows []planJSON
	stale, remote := 0, 0
	for _, p := range plan {
		state := p.State
		if state == pipeline.StateRemote {
			remote++
		}
		if state == pipeline.StateRun {
			stale++
			if cmd == "status" {
				state = "stale" // it ran, but something changed since
				if p.Reason == pipeline.ReasonNeverRan {
					state = "missing"
				}
			}
		}
		rows = append(rows, planJSON{Kind: p.Node.Kind, Name: p.Node.Name, Key: p.Node.Key.String(), State: state, Reason: p.Reason})
	}
	if asJSON {
		return writeJSON(w, map[string]any{"manifest": m.File, "store": dir, "backend": model.BackendID(backend), "stages": rows})
	}
	for _, r := range rows {
		line := fmt.Sprintf("%-7s %s  %s", r.State, r.Key[:12], r.Name)
		if r.Reason != "" {
			line += "  (" + r.Reason + ")"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "%d of %d stages cached", len(plan)-stale-remote, len(plan))
	if remote > 0 {
		fmt.Fprintf(w, ", %d in the remote", remote)
	}
	fmt.Fprintf(w, ", %d would run (store %s)\n", stale, dir)
	return exitOK
}

func writeJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return exitFailure
	}
	return exitOK
}

// loadGraph reads a manifest, resolves the backend and builds the stage graph. It touches
// no store, so invalid input is reported before anything is written.
func loadGraph(path string, loader *data.Loader, backendFlag string) (*pipeline.Graph, string, error) {
	return loadGraphSet(path, nil, loader, backendFlag)
}

// loadGraphSet is loadGraph with --set overrides applied to the manifest, checked against
// the command's limits (--max-cells, --max-rounds, --max-clients).
func loadGraphSet(path string, sets []string, loader *data.Loader, backendFlag string) (*pipeline.Graph, string, error) {
	m, err := manifest.LoadManifestOptions(path, manifest.Options{Overrides: sets, Limits: manifestLimits})
	if err != nil {
		return nil, "", err
	}
	backend, err := model.ResolveBackend(backendFlag)
	if err != nil {
		return nil, "", &manifest.InputError{File: "--backend", Msg: err.Error()}
	}
	g, err := pipeline.Build(m, pipeline.BuildOptions{Describe: loader.Describe, CIFAR10C: loader.CIFAR10C,
		CheckInit: train.CheckInit, Backend: model.BackendID(backend)})
	return g, backend, err
}
