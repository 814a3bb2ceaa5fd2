package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/verify/kept"
)

// syncFlags are the flags of push and pull: the store and remote groups, and their own.
type syncFlags struct {
	commonFlags
	dataDir     string
	backend     string
	checkpoints bool
}

func (o *syncFlags) declare(fs *pflag.FlagSet, g flagGroup) {
	o.commonFlags.declare(fs, g)
	fs.StringVar(&o.dataDir, "data", "", "directory holding datasets (to compute the manifests' keys)")
	fs.StringVar(&o.backend, "backend", "", "GoMLX backend the results were computed with")
	fs.BoolVar(&o.checkpoints, "checkpoints", false, "also copy the resume points of unfinished train stages")
	fs.BoolVar(&o.commonFlags.json, "json", false, "print one JSON object instead of text")
	registerSet(fs, &o.set)
	fs.StringSliceVar(&o.only, "only", nil, "only the runs of these method labels (comma-separated) and the stages they need")
}

// syncUsage is push's or pull's usage line.
func syncUsage(cmd string) string {
	return "fedpipe " + cmd + " MANIFEST... --remote s3://BUCKET/PREFIX|file:///DIR [flags]"
}

// start loads the manifests push or pull names (args) and connects to the remote (ctx:
// cancelled by an interrupt).
func (o *syncFlags) start(ctx context.Context, c *call, args []string) ([]*pipeline.Graph, *remote.Remote, error) {
	cmd := c.name
	if len(args) == 0 {
		return nil, nil, usageErr("fedpipe %s: name at least one MANIFEST", cmd)
	}
	if o.remote.addr() == "" {
		return nil, nil, failf(exitInvalid, "fedpipe %s: no remote: give --remote s3://BUCKET/PREFIX, --remote file:///DIR or set $%s", cmd, remote.EnvRemote)
	}
	var graphs []*pipeline.Graph
	loader := &data.Loader{DataDir: o.dataDir}
	for _, path := range args {
		g, _, err := loadGraphSet(path, o.set, loader, o.backend)
		if err == nil && len(o.only) > 0 {
			g, err = pipeline.Only(g, o.only)
		}
		if err != nil {
			return nil, nil, failf(exitInvalid, "fedpipe %s: %v", cmd, err)
		}
		graphs = append(graphs, g)
	}
	rem, err := o.remote.open(ctx, o.logf(c))
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, interrupted(cmd)
		}
		return nil, nil, failf(remoteExit(err), "fedpipe %s: %v", cmd, err)
	}
	return graphs, rem, nil
}

// logf prints a notice on c's stderr.
func (o *syncFlags) logf(c *call) func(string, ...any) {
	return func(format string, a ...any) { fmt.Fprintf(c.stderr, format+"\n", a...) }
}

// cmdPush is `fedpipe push MANIFEST... --remote URL`: the cached results the remote lacks
// uploaded to it.
var cmdPush = &command{
	name:      "push",
	overview:  []string{"push MANIFEST... --remote URL   upload cached results to a shared S3 remote"},
	usageLine: syncUsage("push"),
	long:      "Uploads the cached results of MANIFEST's stages that the remote lacks (blobs first, then\nthe result entries).",
	groups:    syncGroups,
	flags:     withFlags(pushCmd),
}

// pushFlags are push's flags: pull's, and --results-only.
type pushFlags struct {
	syncFlags
	resultsOnly bool
}

func (o *pushFlags) declare(fs *pflag.FlagSet, g flagGroup) {
	o.syncFlags.declare(fs, g)
	fs.BoolVar(&o.resultsOnly, "results-only", false, "push what verify, report, ls and export read (summaries, metrics, cost, selection and other tables), not the models and states; a run that needs a model recomputes its train stage")
}

// pushCmd is `fedpipe push`.
func pushCmd(c *call, o *pushFlags, args []string) error {
	ctx, stop := interruptContext(c.stderr)
	defer stop()
	graphs, rem, err := o.start(ctx, c, args)
	if err != nil {
		return err
	}
	logf := o.logf(c)
	// A push killed mid-write on this host left its temporary files.
	if n, _ := rem.RemoveDeadTemps(); n > 0 {
		logf("fedpipe push: removed %d temporary files that writers killed mid-write left in %s", n, rem)
	}
	// push only reads: it never creates a store, and a store a run holds (a paper-scale cell
	// computing beside the one just finished) is read from a snapshot, not waited for.
	dir, err := findStore(o.store, args[0], c.stderr)
	if err != nil {
		return failf(exitInvalid, "fedpipe push: %v", err)
	}
	store, err := artifacts.OpenReader(dir, o.options(logf))
	if err != nil {
		return failf(exitFailure, "fedpipe push: %v", err)
	}
	defer store.Close()
	start := time.Now()
	opt := pipeline.SyncOptions{Checkpoints: o.checkpoints}
	if o.resultsOnly {
		if o.checkpoints {
			return failf(exitInvalid, "fedpipe push: --results-only leaves models out; --checkpoints would push them")
		}
		opt.Keep = resultOutput
	}
	// A push into a kept-results directory records each result as its backend's entry
	// (kept.Record): another backend's kept result of the same cell stays.
	rep, err := pipeline.Push(ctx, graphs, store, rem, opt)
	if err == nil {
		damaged := map[string]bool{}
		for _, d := range rep.Damaged {
			name, _, _ := strings.Cut(d, " (result ")
			damaged[name] = true
		}
		err = eachKept(o.remote.addr(), graphs, store, func(dir string, g *pipeline.Graph, n *pipeline.Node) error {
			if damaged[n.Name] {
				return nil // not pushed: its index entry stays as it was
			}
			return kept.Record(dir, g, n)
		})
	}
	return o.report(ctx, c, rep, err, start, rem, dir, "pushed", "the remote", "not in the local store")
}

// cmdPull is `fedpipe pull MANIFEST... --remote URL`: the remote's results the local store
// lacks downloaded into it.
var cmdPull = &command{
	name:      "pull",
	overview:  []string{"pull MANIFEST... --remote URL   download a remote's results into the local store"},
	usageLine: syncUsage("pull"),
	long:      "Downloads the results of MANIFEST's stages that the remote holds and the local store lacks\n(every blob verified against its digest). Exits 4 when the remote holds a result it cannot serve\nintact (naming it), 130 when interrupted.",
	groups:    syncGroups,
	flags:     withFlags(pullCmd),
}

// pullCmd is `fedpipe pull`.
func pullCmd(c *call, o *syncFlags, args []string) error {
	ctx, stop := interruptContext(c.stderr)
	defer stop()
	graphs, rem, err := o.start(ctx, c, args)
	if err != nil {
		return err
	}
	dir := o.writeDir(args[0])
	store, err := artifacts.Open(dir, o.options(o.logf(c)))
	if err != nil {
		return failf(exitFailure, "fedpipe pull: %v", err)
	}
	defer store.Close()
	start := time.Now()
	rep, err := pipeline.Pull(ctx, graphs, store, rem, o.checkpoints)
	return o.report(ctx, c, rep, err, start, rem, dir, "pulled", "the local store", "never computed (no entry in the remote)")
}

// interrupted is the error of push or pull stopped by SIGINT or SIGTERM: exit 130, as run's.
func interrupted(cmd string) error {
	return failf(exitInterrupted, "\nfedpipe %s: interrupted; what was copied is complete (every result's entry is written after its blobs), the rest was not copied: run it again to finish", cmd)
}

// report ends push or pull: err's exit code, or what was copied (verb) to where, and what
// was absent from the source; results found damaged in the remote are named, and end the
// command with exit 4 once the rest is copied.
func (o *syncFlags) report(ctx context.Context, c *call, rep pipeline.SyncReport, err error, start time.Time, rem *remote.Remote, dir, verb, where, absent string) error {
	if ctx.Err() != nil {
		return interrupted(c.name)
	}
	if err != nil {
		code := exitFailure
		if isEnvironment(err) { // a damaged or swapped entry, a full disk
			code = exitEnvironment
		}
		return failf(code, "fedpipe %s: %v", c.name, err)
	}
	stdout := c.stdout
	damaged := func() error {
		if len(rep.Damaged) == 0 {
			return nil
		}
		source := fmt.Sprintf("the remote %s", rem)
		if c.name == "push" {
			source = fmt.Sprintf("the local store %s", dir)
		}
		return failf(exitEnvironment, "fedpipe %s: %d results are damaged in %s (nothing of them was copied; the others were):\n  %s",
			c.name, len(rep.Damaged), source, strings.Join(rep.Damaged, "\n  "))
	}
	if o.json {
		if err := writeJSON(stdout, map[string]any{"remote": rem.String(), "store": dir, "results": rep.Results,
			"present": rep.Present, "missing": rep.Missing, "damaged": rep.Damaged, "partial": rep.Partial, "checkpoints": rep.Checkpoints, "blobs": rep.Blobs,
			"bytes": rep.Bytes, "seconds": time.Since(start).Seconds()}); err != nil {
			return err
		}
		return damaged()
	}
	fmt.Fprintf(stdout, "%s %d results (%d blobs, %s)", verb, rep.Results, rep.Blobs, mib(rep.Bytes))
	if rep.Partial > 0 {
		fmt.Fprintf(stdout, "; %d results only (no models)", rep.Partial)
	}
	if o.checkpoints {
		fmt.Fprintf(stdout, " and %d checkpoints", rep.Checkpoints)
	}
	fmt.Fprintf(stdout, "; %d already in %s, %d %s", rep.Present, where, rep.Missing, absent)
	if len(rep.Damaged) > 0 && c.name == "push" {
		fmt.Fprintf(stdout, ", %d damaged there", len(rep.Damaged))
	} else if len(rep.Damaged) > 0 {
		fmt.Fprintf(stdout, ", %d not in the remote intact (or corrupt there)", len(rep.Damaged))
	}
	fmt.Fprintf(stdout, " (%s, remote %s, store %s)\n", fmtSeconds(time.Since(start)), rem, dir)
	return damaged()
}

// eachKept calls fn, for a push into a directory remote (a kept-results directory dir), with
// every stage of graphs whose result the store holds: recording their index entries
// (kept.Record) lets a later reader tell a kept result that is stale from one never
// computed. An S3 remote keeps no index: fn is not called.
func eachKept(address string, graphs []*pipeline.Graph, store *artifacts.Store, fn func(dir string, g *pipeline.Graph, n *pipeline.Node) error) error {
	if !remote.IsDirAddress(address) {
		return nil
	}
	dir, err := remote.ParseDir(address)
	if err != nil {
		return err
	}
	for _, g := range graphs {
		for _, n := range g.Nodes {
			if _, ok, err := store.ActionMeta(artifacts.Digest(n.Key)); err != nil {
				return err
			} else if !ok {
				continue
			}
			if err := fn(dir, g, n); err != nil {
				return err
			}
		}
	}
	return nil
}
