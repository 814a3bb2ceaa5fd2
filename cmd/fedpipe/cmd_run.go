package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	fpresults "github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/train"
)

// runCmd is `fedpipe run MANIFEST`: every stage whose result is not in the store, in
// dependency order, then the report (runOrStatus).
func runCmd(c *call) error { return runOrStatus(c) }

// runOrStatus runs or plans (status, run --dry-run) a manifest's stages.
func runOrStatus(c *call) error {
	cmd, stdout, stderr := c.name, c.stdout, c.stderr
	fs := c.flags()
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
	if err := parseFlags(fs, c.args, stdout); err != nil {
		return err
	}
	if err := watchOnly(fs); cmd == "status" && err != nil {
		return failf(exitInvalid, "fedpipe status: %v", err)
	}
	if fs.NArg() != 1 {
		return usageErr("fedpipe %s: expected one MANIFEST argument, got %d", cmd, fs.NArg())
	}
	path := fs.Arg(0)
	fail := func(err error) error { return failure("fedpipe", err) }

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
		return failf(exitInvalid, "fedpipe %s: %v", cmd, err)
	}

	progress := newProgress(stderr, f.quiet || f.json)
	logs := &pipeline.LogCapture{}
	ctx, stop := interruptContext(stderr)
	defer stop()
	rem, err := f.remote.open(ctx, logs.Logf)
	if err != nil {
		return failf(remoteExit(err), "fedpipe: %v", err)
	}
	dir := f.writeDir(path)
	if err := checkStorePath(dir, storeHow(f.store)); err != nil {
		return fail(err)
	}
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
		case strings.Contains(s, "lost the lease of"):
			fmt.Fprintf(stderr, "fedpipe: %s\n", s) // a worker's result dropped: never silent
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
	store, err := open(openDir, f.options(logs.Logf))
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

	together, lockstep, line, err := f.togetherFor(plan, backend)
	if err != nil {
		return failf(exitInvalid, "fedpipe run: %v", err)
	}
	env := &stages.Env{Loader: loader, Backend: backend}
	if lockstep {
		env.Hub = train.NewHub(ctx, backend)
		defer env.Hub.Close()
	}
	if line != "" && split == nil {
		progress.Logf("%s", line)
	}
	ex := &pipeline.Executor{Store: store, Stages: pipeline.StageFuncs(stages.Funcs(env)),
		Progress: progress, Remote: rem, Split: split, Build: buildInfo(backend), Together: together}
	start := time.Now()
	results, err := ex.Execute(ctx, g, plan)
	if err != nil {
		if ctx.Err() != nil {
			return failf(exitInterrupted, "\nfedpipe: interrupted; finished stages and train checkpoints are saved. Resume with:\n  fedpipe run %s", shellJoin(c.args))
		}
		return fail(err)
	}
	if err := recordManifest(store, g); err != nil {
		return fail(err)
	}
	reportMD := ""
	if last := results[len(results)-1]; last.Kind == manifest.KindReport {
		if d, err := artifacts.ParseDigest(last.Outputs[fpresults.OutReportMarkdown]); err == nil {
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
	return nil
}
