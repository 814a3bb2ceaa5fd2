package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/train"
	"github.com/fedpipe/fedpipe/verify"
	"github.com/fedpipe/fedpipe/verify/audit"
	"github.com/fedpipe/fedpipe/verify/kept"
)

// defaultKept is the repository's kept-results directory.
const defaultKept = "reproduced"

// cmdReproduced checks the published cells of table manifests against the paper-scale
// results kept in a directory (the repository's reproduced/): per cell reproduced,
// differs, stale or not computed, then one summary line; it writes or checks the
// generated page. It runs no training unless --audit asks it to recompute a few rounds.
var cmdReproduced = &command{
	name:      "reproduced",
	overview:  []string{"reproduced MANIFEST...    published cells against the paper-scale results kept in reproduced/"},
	usageLine: "fedpipe reproduced [MANIFEST...] [flags]",
	long:      "Checks each manifest's expect entries against the results kept in --kept (computed elsewhere and\npushed there with `fedpipe push --results-only`): per published cell reproduced, differs, stale (made\nby other code or settings: which), not computed, or needs model.init (its pretrained weights are\nmissing here), measured over the seeds kept so far; then one line \"N of M published cells reproduced at\npaper scale (K stale, L not computed)\", M counting the cells that can be computed here;\nthen the claims' verdicts counted, and a line per paper (its kept cells, or why none can be computed here).\nA reversed claim changes no exit code.\nManifests whose data is not installed, or that have no expect entries, are listed as not checked.\nWith no MANIFEST, the table manifests (fedobp-*, fedselect-*, dmpfl-*, table1) in the manifests/ folder\nbeside --kept, as `make reproduced` checks them. Kept curves are shown beside the authors' logs the manifests record (logs:).\nExits 3 when a cell differs (one whose difference is a recorded known deviation is\ncounted apart and does not), or a kept curve differs from its authors' log by more than 0.5 with no deviation recorded, or the audit fails, 1 when --check finds the page out of date, 4 when a\nkept result is damaged or missing (naming the stage and the file). The directory may be read-only.",
	groups:    manifestGroups,
	flags:     withFlags(reproducedCmd),
}

// reproducedFlags are reproduced's flags.
type reproducedFlags struct {
	commonFlags
	kept, page, check string
	audit, sample     int
	auditSeed         int64
	bind              bool
}

func (f *reproducedFlags) declare(fs *pflag.FlagSet, g flagGroup) {
	f.commonFlags.declare(fs, g)
	fs.StringVar(&f.kept, "kept", defaultKept, "kept-results directory (a directory remote: cas/, ac/, cells/)")
	fs.StringVar(&f.page, "page", "", "write the generated page (markdown) to this file")
	fs.StringVar(&f.check, "check", "", "compare the generated page with this file; exit 1 when it is out of date")
	fs.IntVar(&f.audit, "audit", 0, "recompute the first N rounds of a seeded sample of kept train stages and compare their fingerprints")
	fs.IntVar(&f.sample, "audit-sample", 1, "with --audit: how many kept train stages to recompute")
	fs.Int64Var(&f.auditSeed, "audit-seed", 0, "with --audit: the seed that draws the sample")
	fs.BoolVar(&f.bind, "bind", false, "first bind every index entry of --kept that binds no outputs (recorded before kept results were bound to their cells) to the outputs its ac/ entry names now; only for a directory known to be genuine (as committed)")
}

// reproducedCmd is `fedpipe reproduced [MANIFEST...]`.
func reproducedCmd(c *call, f *reproducedFlags, args []string) error {
	stdout, stderr := c.stdout, c.stderr
	fail := func(err error) error { return failure("fedpipe reproduced", err) }
	if f.audit < 0 || f.sample < 0 {
		return fail(&manifest.InputError{File: "--audit", Msg: "--audit and --audit-sample must not be negative"})
	}
	dir, err := filepath.Abs(f.kept)
	if err != nil {
		return fail(err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fail(&manifest.InputError{File: "--kept", Msg: fmt.Sprintf("%s is not a directory of kept results", f.kept)})
	}
	paths := args
	if len(paths) == 0 { // every table manifest beside the kept directory, as make reproduced checks
		if paths, err = kept.TableManifests(filepath.Join(filepath.Dir(dir), "manifests")); err != nil {
			return fail(err)
		}
	}
	if f.bind {
		n, err := kept.Bind(dir)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stderr, "fedpipe reproduced: bound %d index entries of %s to their results\n", n, dir)
	}
	ctx, stop := interruptContext(stderr)
	defer stop()
	k, err := kept.Open(ctx, dir)
	if err != nil {
		return fail(err)
	}
	defer k.Close()
	loader := &data.Loader{DataDir: f.data}
	opt := kept.Options{Set: f.set, Loader: loader, Limits: manifestLimits,
		Load: func(path string, set []string) (*pipeline.Graph, string, error) {
			return loadGraphSet(path, set, loader, f.backend)
		},
		Build: func(path string, set []string, backend string) (*pipeline.Graph, error) {
			return buildGraph(path, set, loader, backend)
		}}
	ms, graphs, err := k.CheckAll(ctx, paths, opt)
	if err != nil {
		return fail(err)
	}
	counts := kept.Count(ms)
	regenerate := "make reproduced-page"
	text := kept.Page(ms, regenerate)
	if f.json {
		writeJSON(stdout, map[string]any{"kept": f.kept, "manifests": ms, "reproduced": counts.Reproduced, "cells": counts.Cells,
			"differs": counts.Differs, "known_deviations": counts.Known, "curves_off_log": counts.OffLog, "curves_without_log_entry": counts.NoEntry, "stale": counts.Stale, "not_computed": counts.Missing, "summary": counts.Line(),
			"claims": verify.TallyClaims(kept.ClaimsOf(ms)).Line(), "papers": kept.PaperLines(ms)})
	} else {
		kept.WriteText(stdout, ms)
	}
	var code error // how the command ends once the summary line is printed
	if f.audit > 0 {
		code = auditKept(ctx, graphs, k.Store, f.commonFlags, f.audit, f.sample, f.auditSeed, stdout, stderr)
	}
	if f.page != "" {
		if err := os.WriteFile(f.page, []byte(text), 0o644); err != nil {
			return fail(err)
		}
	}
	if f.check != "" {
		old, err := os.ReadFile(f.check)
		if err != nil || string(old) != text {
			fmt.Fprintf(stderr, "fedpipe reproduced: %s is out of date with the kept results; regenerate it with `%s`\n", f.check, regenerate)
			if code == nil {
				code = exitErr(exitFailure)
			}
		}
	}
	if !f.json {
		fmt.Fprintln(stdout, counts.Line())
		kept.WriteHeadline(stdout, ms)
	}
	if counts.Differs > 0 || counts.OffLog > 0 || counts.NoEntry > 0 {
		return exitErr(exitMismatch)
	}
	return code
}

// auditKept recomputes the first rounds of a seeded sample of the kept train stages of
// every checked manifest (each stage once, however many manifests share it) and compares
// their fingerprints with the kept ones (audit.Kept); exit 3 unless all pass.
func auditKept(ctx context.Context, graphs []*pipeline.Graph, store *artifacts.Store, f commonFlags, rounds, sample int,
	seed int64, stdout, stderr io.Writer) error {
	backend, err := model.ResolveBackend(f.backend)
	if err != nil {
		return failure("fedpipe reproduced --audit", &manifest.InputError{File: "--backend", Msg: err.Error()})
	}
	nodes, err := audit.KeptTrainNodesOf(graphs, store)
	if err != nil {
		return failure("fedpipe reproduced --audit", err)
	}
	loader := &data.Loader{DataDir: f.data}
	progress := func(i, of int, n *pipeline.Node) {
		fmt.Fprintf(stderr, "audit %d/%d: %s (%d rounds)\n", i+1, of, n.Name, min(rounds, n.Run.Train.Rounds))
	}
	r, err := audit.Run(nodes, sample, seed, progress, func(n *pipeline.Node) (audit.Cell, error) {
		return audit.Kept(ctx, n, store, loader, backend, rounds, model.CheckTolerance)
	})
	if err != nil {
		return failure("fedpipe reproduced --audit", err)
	}
	if !f.json {
		fmt.Fprint(stdout, audit.Markdown(r.Cells, model.CheckTolerance))
		fmt.Fprintf(stdout, "audit: %d of %d kept train results (seed %d) recomputed over their first %d rounds: %d reproduce their fingerprints",
			len(r.Cells), r.Kept, seed, rounds, r.Bitwise)
		if r.Crossed > 0 {
			fmt.Fprintf(stdout, "; %d of %d made on other backends pass the cross-backend check (round %d on %s within %g)",
				r.CrossPassed, r.Crossed, train.SketchRound, model.CPUBackend, model.CheckTolerance)
		}
		fmt.Fprintln(stdout)
	}
	if !r.Passed() {
		return exitErr(exitMismatch)
	}
	return nil
}
