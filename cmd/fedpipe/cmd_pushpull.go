package main

import (
	"context"
	"fmt"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
)

// pushPull implements `fedpipe push` and `fedpipe pull`.
func pushPull(c *call) error {
	cmd, args, stdout, stderr := c.name, c.args, c.stdout, c.stderr
	fs := c.flags()
	var rf remoteFlags
	rf.register(fs, cmd)
	var sf storeFlags
	sf.register(fs)
	dataFlag := fs.String("data", "", "directory holding datasets (to compute the manifests' keys)")
	backendFlag := fs.String("backend", "", "GoMLX backend the results were computed with")
	checkpoints := fs.Bool("checkpoints", false, "also copy the resume points of unfinished train stages")
	var resultsOnly *bool
	if cmd == "push" {
		resultsOnly = fs.Bool("results-only", false, "push what verify, report, ls and export read (summaries, metrics, cost, selection and other tables), not the models and states; a run that needs a model recomputes its train stage")
	}
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	var sets []string
	registerSet(fs, &sets)
	only := fs.StringSlice("only", nil, "only the runs of these method labels (comma-separated) and the stages they need")
	fs.Usage = func() {
		what := "Uploads the cached results of MANIFEST's stages that the remote lacks (blobs first, then\nthe result entries)."
		if cmd == "pull" {
			what = "Downloads the results of MANIFEST's stages that the remote holds and the local store lacks\n(every blob verified against its digest)."
		}
		fmt.Fprintf(fs.Output(), "Usage: fedpipe %s MANIFEST... --remote s3://BUCKET/PREFIX|file:///DIR [flags]\n\n%s\n\nFlags:\n%s", cmd, what, fs.FlagUsages())
	}
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErr("fedpipe %s: name at least one MANIFEST", cmd)
	}
	if rf.addr() == "" {
		return failf(exitInvalid, "fedpipe %s: no remote: give --remote s3://BUCKET/PREFIX, --remote file:///DIR or set $%s", cmd, remote.EnvRemote)
	}
	var graphs []*pipeline.Graph
	loader := &data.Loader{DataDir: *dataFlag}
	for _, path := range fs.Args() {
		g, _, err := loadGraphSet(path, sets, loader, *backendFlag)
		if err == nil && len(*only) > 0 {
			g, err = pipeline.Only(g, *only)
		}
		if err != nil {
			return failf(exitInvalid, "fedpipe %s: %v", cmd, err)
		}
		graphs = append(graphs, g)
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	ctx := context.Background()
	rem, err := rf.open(ctx, logf)
	if err != nil {
		return failf(remoteExit(err), "fedpipe %s: %v", cmd, err)
	}
	if cmd == "push" { // a push killed mid-write on this host left its temporary files
		if n, _ := rem.RemoveDeadTemps(); n > 0 {
			logf("fedpipe push: removed %d temporary files that writers killed mid-write left in %s", n, rem)
		}
	}
	dir := sf.writeDir(fs.Arg(0))
	if cmd == "push" { // push only reads: it never creates a store
		if dir, err = findStore(sf.store, fs.Arg(0), stderr); err != nil {
			return failf(exitInvalid, "fedpipe %s: %v", cmd, err)
		}
	}
	open := artifacts.Open
	if cmd == "push" {
		// push only reads the local store: a store a run holds (a paper-scale cell
		// computing beside the one just finished) is read from a snapshot, not waited for.
		open = artifacts.OpenReader
	}
	store, err := open(dir, sf.options(logf))
	if err != nil {
		return failf(exitFailure, "fedpipe %s: %v", cmd, err)
	}
	defer store.Close()
	start := time.Now()
	var rep pipeline.SyncReport
	if cmd == "pull" {
		rep, err = pipeline.Pull(ctx, graphs, store, rem, *checkpoints)
	} else {
		opt := pipeline.SyncOptions{Checkpoints: *checkpoints}
		if *resultsOnly {
			if *checkpoints {
				return failf(exitInvalid, "fedpipe push: --results-only leaves models out; --checkpoints would push them")
			}
			opt.Keep = resultOutput
		}
		// A push into a kept-results directory records each result as its backend's entry
		// (pipeline.RecordKept): another backend's kept result of the same cell stays.
		rep, err = pipeline.Push(ctx, graphs, store, rem, opt)
		if err == nil {
			err = eachKept(rf.addr(), graphs, store, func(dir string, g *pipeline.Graph, n *pipeline.Node) error {
				return pipeline.RecordKept(dir, g, n)
			})
		}
	}
	if err != nil {
		code := exitFailure
		if isEnvironment(err) { // a damaged or swapped entry, a full disk
			code = exitEnvironment
		}
		return failf(code, "fedpipe %s: %v", cmd, err)
	}
	if *asJSON {
		return writeJSON(stdout, map[string]any{"remote": rem.String(), "store": dir, "results": rep.Results,
			"present": rep.Present, "missing": rep.Missing, "partial": rep.Partial, "checkpoints": rep.Checkpoints, "blobs": rep.Blobs,
			"bytes": rep.Bytes, "seconds": time.Since(start).Seconds()})
	}
	verb, where, absent := "pushed", "the remote", "not in the local store"
	if cmd == "pull" {
		verb, where, absent = "pulled", "the local store", "not in the remote (or corrupt there)"
	}
	fmt.Fprintf(stdout, "%s %d results (%d blobs, %s)", verb, rep.Results, rep.Blobs, mib(rep.Bytes))
	if rep.Partial > 0 {
		fmt.Fprintf(stdout, "; %d results only (no models)", rep.Partial)
	}
	if *checkpoints {
		fmt.Fprintf(stdout, " and %d checkpoints", rep.Checkpoints)
	}
	fmt.Fprintf(stdout, "; %d already in %s, %d %s (%s, remote %s, store %s)\n", rep.Present, where, rep.Missing, absent,
		fmtSeconds(time.Since(start)), rem, dir)
	return nil
}

// eachKept calls fn, for a push into a directory remote (a kept-results directory dir), with
// every stage of graphs whose result the store holds: recording their index entries
// (pipeline.RecordKept) lets a later reader tell a kept result that is stale from one never
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
