package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/artifacts/storedir"
	"github.com/fedpipe/fedpipe/launch"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	fpresults "github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/screens/progress"
	"github.com/fedpipe/fedpipe/stages"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/train"
)

// cmdRun is `fedpipe run MANIFEST`: every stage whose result is not in the store, in
// dependency order, then the report; with --dry-run, the plan (openPlan, printPlan).
var cmdRun = &command{
	name:      "run",
	overview:  []string{"run MANIFEST [flags]      run every stage whose result is not cached"},
	usageLine: "fedpipe run MANIFEST [flags]",
	long:      "Runs every stage of MANIFEST whose result is not in the store, in dependency order, and prints the report.",
	groups:    runGroups,
	flags:     withFlags(runCmd),
}

// runCmd is `fedpipe run MANIFEST`.
func runCmd(c *call, f *commonFlags, args []string) error {
	stdout := c.stdout
	if len(args) != 1 {
		return usageErr("fedpipe run: expected one MANIFEST argument, got %d", len(args))
	}
	path := args[0]
	fail := func(err error) error { return failure("fedpipe", err) }
	how := planRun
	if f.dryRun {
		how = planDry
	}
	p, err := openPlan(c, f, path, how)
	if err != nil {
		return err
	}
	defer p.close()
	if f.dryRun {
		return p.print(false, f.json, stdout)
	}
	g, backend, plan, store, rem, ctx, progress, dir := p.g, p.backend, p.plan, p.store, p.rem, p.ctx, p.progress, p.dir
	together, lockstep, line, err := f.togetherFor(plan, backend)
	if err != nil {
		return failf(exitInvalid, "fedpipe run: %v", err)
	}
	env := &stages.Env{Loader: p.loader, Backend: backend}
	if lockstep {
		env.Hub = train.NewHub(ctx, backend)
		defer env.Hub.Close()
	}
	if line != "" && p.split == nil {
		progress.Logf("%s", line)
	}
	ex := &pipeline.Executor{Store: store, Stages: pipeline.StageFuncs(stages.Funcs(env)),
		Progress: progress, Remote: rem, Split: p.split, Build: buildInfo(backend), Together: together}
	start := time.Now()
	results, err := ex.Execute(ctx, g, plan)
	if err != nil {
		if ctx.Err() != nil {
			return failf(exitInterrupted, "\nfedpipe: interrupted; finished stages and train checkpoints are saved. Resume with:\n  fedpipe run %s", launch.ShellJoin(c.args))
		}
		return fail(err)
	}
	if err := pipeline.RecordManifest(store, g); err != nil {
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
	ran, resumed, skipped, fetched := 0, 0, 0, 0
	for _, r := range results {
		switch {
		case r.State == pipeline.StateRan:
			ran++
			if r.ResumedFrom > 0 {
				resumed++
			}
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
	if !f.quiet { // --quiet: the closing line alone, no tables
		fmt.Fprintf(stdout, "%s\n", reportMD)
	}
	fmt.Fprintf(stdout, "%d of %d stages ran", ran, len(results))
	if resumed > 0 {
		fmt.Fprintf(stdout, " (%d resumed)", resumed)
	}
	fmt.Fprintf(stdout, ", %d cached", len(results)-ran-skipped-fetched)
	if fetched > 0 {
		fmt.Fprintf(stdout, ", %d fetched from the remote", fetched)
	}
	if skipped > 0 {
		fmt.Fprintf(stdout, ", %d left to other shards", skipped)
	}
	fmt.Fprintf(stdout, " (%s, %s)\n", fmtSeconds(time.Since(start)), where)
	return nil
}

// stagePlan is a manifest's plan against its store, as run and status make it, with what
// running it needs.
type stagePlan struct {
	g        *pipeline.Graph
	backend  string
	loader   *data.Loader
	split    *pipeline.Split
	ctx      context.Context // cancelled by Ctrl-C and SIGTERM
	progress pipeline.Progress
	rem      *remote.Remote // nil without one
	dir      string         // the store's directory
	store    *artifacts.Store
	plan     []pipeline.PlanEntry
	closers  []func() // close runs them, last first
}

// close closes the store and releases what openPlan took.
func (p *stagePlan) close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
}

// print prints the plan (status, run --dry-run), the remote's results marked; status names
// stages that would run stale or missing.
func (p *stagePlan) print(status, asJSON bool, w io.Writer) error {
	if p.rem != nil {
		if err := pipeline.MarkRemote(p.ctx, p.plan, p.rem); err != nil {
			return failure("fedpipe", err)
		}
	}
	return printPlan(status, p.g.Manifest, p.dir, p.backend, p.plan, asJSON, w)
}

// planMode is what a plan is made for.
type planMode int

const (
	planRun    planMode = iota // run: the store is opened for writing, created if need be
	planDry                    // run --dry-run: read-only, never created
	planStatus                 // status: read-only, the store found (findStore), never created
)

// openPlan loads the manifest at path with f's overrides and selection, connects to the
// remote and opens the store, and plans the manifest's stages. A plan only printed (status,
// run --dry-run) opens the store read-only and never creates one: without a store it plans
// against an empty one. Everything that can be wrong with the input is checked before the
// store is opened, so invalid input never writes anything.
func openPlan(c *call, f *commonFlags, path string, how planMode) (p *stagePlan, err error) {
	planOnly := how != planRun
	stderr := c.stderr
	fail := func(err error) error { return failure("fedpipe", err) }
	p = &stagePlan{loader: &data.Loader{DataDir: f.data}}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	g, backend, err := loadGraphSet(path, f.set, p.loader, f.backend)
	if err == nil && len(f.only) > 0 {
		g, err = pipeline.Only(g, f.only)
	}
	if err != nil {
		return p, fail(err)
	}
	p.g, p.backend = g, backend
	if p.split, err = f.remote.split(); err != nil {
		return p, failf(exitInvalid, "fedpipe run: %v", err)
	}

	p.progress = progress.New(stderr, f.quiet || f.json)
	logs := &pipeline.LogCapture{}
	ctx, stop := interruptContext(stderr)
	p.ctx, p.closers = ctx, append(p.closers, stop)
	rem, err := f.remote.open(ctx, logs.Logf)
	if err != nil {
		return p, failf(remoteExit(err), "fedpipe: %v", err)
	}
	p.rem = rem
	dir := f.writeDir(path)
	if err := storedir.CheckPath(dir, storedir.How(f.store)); err != nil {
		return p, fail(err)
	}
	if how == planStatus {
		found, err := findStore(f.store, path, stderr)
		switch {
		case err == nil:
			dir = found
		case rem == nil:
			return p, fail(err) // status never creates a store
		}
	}
	p.dir = dir
	// Store notices (a wait for another process's lock first of all) are printed at once.
	logs.Next = func(s string) {
		switch {
		case !f.json:
			p.progress.Logf("store: %s", s)
		case strings.Contains(s, "in use"):
			fmt.Fprintf(stderr, "fedpipe: store: %s\n", s) // never silent, even with --json
		case strings.Contains(s, "lost the lease of"):
			fmt.Fprintf(stderr, "fedpipe: %s\n", s) // a worker's result dropped: never silent
		}
	}
	open := artifacts.Open
	if planOnly {
		open = artifacts.OpenReader // never waits for a run that holds the store
	}
	openDir := dir
	if planOnly && !storedir.Has(dir) { // neither creates a store: they plan against an empty one
		tmp, err := os.MkdirTemp("", "fedpipe-dry-run-")
		if err != nil {
			return p, fail(err)
		}
		p.closers = append(p.closers, func() { os.RemoveAll(tmp) })
		openDir = tmp
	}
	store, err := open(openDir, f.options(logs.Logf))
	if err != nil {
		return p, fail(err)
	}
	p.store = store
	p.closers = append(p.closers, func() {
		// A store that cannot close cleanly (a disk filled meanwhile) says why; its log
		// keeps what was written.
		if err := store.Close(); err != nil {
			fmt.Fprintf(stderr, "fedpipe: %v\n", err)
		}
	})
	if p.plan, err = pipeline.Plan(g, store, logs); err != nil {
		return p, fail(err)
	}
	return p, nil
}

// statusPlan is `fedpipe status MANIFEST` without --watch: whether every stage's result is
// cached and, if not, why it would run. Its flags are status --watch's (its help lists them;
// statusWatch honours them).
func statusPlan(c *call, f *watchFlags, args []string) error {
	if err := watchOnly(c.fs); err != nil {
		return failf(exitInvalid, "fedpipe status: %v", err)
	}
	if len(args) != 1 {
		return usageErr("fedpipe status: expected one MANIFEST argument, got %d", len(args))
	}
	p, err := openPlan(c, &f.commonFlags, args[0], planStatus)
	if err != nil {
		return err
	}
	defer p.close()
	return p.print(true, f.json, c.stdout)
}
