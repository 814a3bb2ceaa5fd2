package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/train"
	"github.com/fedpipe/fedpipe/verify"
)

// defaultKept is the repository's kept-results directory.
const defaultKept = "reproduced"

// reproducedCmd checks the published cells of table manifests against the paper-scale
// results kept in a directory (the repository's reproduced/): per cell reproduced,
// differs, stale or not computed, then one summary line; it writes or checks the
// generated page. It runs no training unless --audit asks it to recompute a few rounds.
func reproducedCmd(c *call) error {
	args, stdout, stderr := c.args, c.stdout, c.stderr
	fs := c.flags()
	var f commonFlags
	f.register(fs, c.groups)
	kept := fs.String("kept", defaultKept, "kept-results directory (a directory remote: cas/, ac/, cells/)")
	page := fs.String("page", "", "write the generated page (markdown) to this file")
	check := fs.String("check", "", "compare the generated page with this file; exit 1 when it is out of date")
	audit := fs.Int("audit", 0, "recompute the first N rounds of a seeded sample of kept train stages and compare their fingerprints")
	sample := fs.Int("audit-sample", 1, "with --audit: how many kept train stages to recompute")
	auditSeed := fs.Int64("audit-seed", 0, "with --audit: the seed that draws the sample")
	bind := fs.Bool("bind", false, "first bind every index entry of --kept that binds no outputs (recorded before kept results were bound to their cells) to the outputs its ac/ entry names now; only for a directory known to be genuine (as committed)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: fedpipe reproduced [MANIFEST...] [flags]\n\nChecks each manifest's expect entries against the results kept in --kept (computed elsewhere and\npushed there with `fedpipe push --results-only`): per published cell reproduced, differs, stale (made\nby other code or settings: which), not computed, or needs model.init (its pretrained weights are\nmissing here), measured over the seeds kept so far; then one line \"N of M published cells reproduced at\npaper scale (K stale, L not computed)\", M counting the cells that can be computed here.\nManifests whose data is not installed, or that have no expect entries, are listed as not checked.\nWith no MANIFEST, the table manifests (fedobp-*, fedselect-*, dmpfl-*, table1) in the manifests/ folder\nbeside --kept, as `make reproduced` checks them. Exits 3 when a cell differs (one whose difference is a recorded known deviation is\ncounted apart and does not) or the audit fails, 1 when --check finds the page out of date, 4 when a\nkept result is damaged or missing (naming the stage and the file). The directory may be read-only.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	fail := func(err error) error { return failure("fedpipe reproduced", err) }
	if *audit < 0 || *sample < 0 {
		return fail(&manifest.InputError{File: "--audit", Msg: "--audit and --audit-sample must not be negative"})
	}
	dir, err := filepath.Abs(*kept)
	if err != nil {
		return fail(err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fail(&manifest.InputError{File: "--kept", Msg: fmt.Sprintf("%s is not a directory of kept results", *kept)})
	}
	paths := fs.Args()
	if len(paths) == 0 { // every table manifest beside the kept directory, as make reproduced checks
		if paths, err = tableManifests(filepath.Join(filepath.Dir(dir), "manifests")); err != nil {
			return fail(err)
		}
	}
	if *bind {
		n, err := pipeline.BindKept(dir)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stderr, "fedpipe reproduced: bound %d index entries of %s to their results\n", n, dir)
	}
	ctx, stop := interruptContext(stderr)
	defer stop()
	// Read-only: a reviewer's read-only checkout verifies, and nothing here writes to it.
	// No notices: whatever the remote would log as a miss (a damaged object) fails the
	// command instead, with the same words (pipeline.FetchKept).
	r, err := remote.Open(ctx, "file://"+dir, remote.Options{ReadOnly: true})
	if err != nil {
		return fail(err)
	}
	tmp, err := os.MkdirTemp("", "fedpipe-reproduced-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	store, err := artifacts.Open(filepath.Join(tmp, "store"), artifacts.Options{})
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	loader := &data.Loader{DataDir: f.data}
	var ms []verify.KeptManifest
	var graphs []*pipeline.Graph
	for _, path := range paths {
		km, gs, err := checkKept(ctx, path, f, loader, dir, r, store)
		if err != nil {
			return fail(err)
		}
		ms = append(ms, km)
		graphs = append(graphs, gs...)
	}
	counts := verify.Count(ms)
	regenerate := "make reproduced-page"
	text := verify.KeptPage(ms, regenerate)
	if f.json {
		writeJSON(stdout, map[string]any{"kept": *kept, "manifests": ms, "reproduced": counts.Reproduced, "cells": counts.Cells,
			"differs": counts.Differs, "known_deviations": counts.Known, "stale": counts.Stale, "not_computed": counts.Missing, "summary": counts.Line()})
	} else {
		for _, m := range ms {
			if m.Skipped != "" {
				fmt.Fprintf(stdout, "%s: not checked (%s)\n", m.File, m.Skipped)
				continue
			}
			fmt.Fprintf(stdout, "\n%s\n", m.File)
			fmt.Fprintf(stdout, "  %s\n", strings.Join(keptHeader, " | "))
			for _, c := range m.Cells {
				row := c.Row()
				row[6] = verify.KeptVerdict(c, false)
				fmt.Fprintf(stdout, "  %s\n", strings.Join(row, " | "))
			}
		}
		fmt.Fprintln(stdout)
	}
	var code error // how the command ends once the summary line is printed
	if *audit > 0 {
		code = auditKept(ctx, graphs, store, f, *audit, *sample, *auditSeed, stdout, stderr)
	}
	if *page != "" {
		if err := os.WriteFile(*page, []byte(text), 0o644); err != nil {
			return fail(err)
		}
	}
	if *check != "" {
		old, err := os.ReadFile(*check)
		if err != nil || string(old) != text {
			fmt.Fprintf(stderr, "fedpipe reproduced: %s is out of date with the kept results; regenerate it with `%s`\n", *check, regenerate)
			if code == nil {
				code = exitErr(exitFailure)
			}
		}
	}
	if !f.json {
		fmt.Fprintln(stdout, counts.Line())
	}
	if counts.Differs > 0 {
		return exitErr(exitMismatch)
	}
	return code
}

// checkKept verifies one manifest against the kept results: the results the kept
// directory holds for its stages are fetched into store (a throwaway), then verified
// with partial seeds and stale detection. A manifest whose data is missing, or that
// has no expectations, comes back skipped.
func checkKept(ctx context.Context, path string, f commonFlags, loader *data.Loader, dir string, r *remote.Remote,
	store *artifacts.Store) (verify.KeptManifest, []*pipeline.Graph, error) {
	km := verify.KeptManifest{File: path}
	// A missing dataset is a reason to skip the manifest, not an error: find it before the
	// graph is built (which reports it as an input error at dataset.path). Missing initial
	// weights (model.init) are what the manifest's cells need: the graph is built without
	// them only to list those cells.
	set, needs := f.set, ""
	if m, err := manifest.LoadManifestOptions(path, manifest.Options{Overrides: f.set, Limits: manifestLimits}); err == nil {
		var missing *data.MissingDataError
		if _, err := loader.Describe(m.Dataset); errors.As(err, &missing) {
			km.Name = m.Name
			km.Skipped = "data not installed (" + missing.Dataset + ")"
			return km, nil, nil
		}
		if needs = missingInit(m); needs != "" {
			set = append(slices.Clone(f.set), "model.init=")
		}
	}
	g, backend, err := loadGraphSet(path, set, loader, f.backend)
	if err != nil {
		return km, nil, err
	}
	if needs != "" {
		km.Name = g.Manifest.Name
		cells, err := verify.VerifyWith(g, store, verify.Options{PartialSeeds: true})
		if err != nil {
			return km, nil, err
		}
		for i := range cells {
			cells[i].Verdict, cells[i].Needs = verify.Needs, needs
		}
		km.Cells, km.Provenance = cells, make([][]string, len(cells))
		return km, nil, nil
	}
	km.Name = g.Manifest.Name
	if len(g.Manifest.Expect) == 0 {
		km.Skipped = noExpect
		return km, nil, nil
	}
	// Each cell reads the kept result of one backend (verify.ChooseKept): this one's (the
	// reference, fpfast, unless --backend says otherwise), or another's that the index
	// keeps, read against the keys this code gives that backend (model.CurrentBackendID):
	// stale when code or settings changed, never because this machine lacks the backend.
	reading, err := readKept(ctx, dir, g, store, r)
	if err != nil {
		return km, nil, err
	}
	readings, graphs := []verify.KeptReading{reading}, []*pipeline.Graph{g}
	ids, err := pipeline.KeptBackends(dir, g.Manifest.Name)
	if err != nil {
		return km, nil, err
	}
	seen := map[string]bool{pipeline.BackendFamily(model.BackendID(backend)): true}
	for _, id := range ids {
		cur := model.CurrentBackendID(id)
		if seen[cur] || seen[pipeline.BackendFamily(cur)] {
			continue
		}
		seen[cur] = true
		gb, err := buildGraph(path, set, loader, cur)
		if err != nil {
			return km, nil, err
		}
		rb, err := readKept(ctx, dir, gb, store, r)
		if err != nil {
			return km, nil, err
		}
		readings, graphs = append(readings, rb), append(graphs, gb)
	}
	km.Cells, km.Provenance = verify.ChooseKept(readings)
	return km, graphs, nil
}

// readKept reads the published cells of g (built for one backend) from the kept results:
// every kept result of its stages, a stale cell's under its old key included (its figure
// is shown), is fetched into store; one that is damaged or missing fails the command,
// naming it.
func readKept(ctx context.Context, dir string, g *pipeline.Graph, store *artifacts.Store, r *remote.Remote) (verify.KeptReading, error) {
	rd := verify.KeptReading{Family: pipeline.BackendFamily(graphBackend(g))}
	if err := pipeline.FetchKept(ctx, dir, g, store, r); err != nil {
		return rd, err
	}
	cells, err := verify.VerifyWith(g, store, verify.Options{PartialSeeds: true, Stale: pipeline.KeptStale(dir, g)})
	if err != nil {
		return rd, err
	}
	rd.Cells = cells
	for _, c := range cells {
		var lines []string
		for _, rp := range c.Provenance {
			lines = append(lines, fmt.Sprintf("seed %d: %s", rp.Seed, provenanceLine(rp.Train)))
		}
		sort.Strings(lines)
		rd.Provenance = append(rd.Provenance, lines)
	}
	return rd, nil
}

// graphBackend is the backend id g's train stages compute with ("" when it has none).
func graphBackend(g *pipeline.Graph) string {
	for _, n := range g.Nodes {
		if n.Backend != "" {
			return n.Backend
		}
	}
	return ""
}

// missingInit describes the initial-weights file m's model.init names when it does not
// exist (relative to the working directory, as the graph reads it); "" when m has none or
// it is there.
func missingInit(m *manifest.Manifest) string {
	if m.Model.Init == "" {
		return ""
	}
	if _, err := os.Stat(m.Model.Init); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return "model.init: " + m.Model.Init + " (pretrained initial weights, not obtainable here; docs/methods.md, \"Initial weights\")"
}

// provenanceLine condenses how a kept train stage was made: CPU (or backend), threads,
// wall time, the process's peak memory, date and commit.
func provenanceLine(p *pipeline.Provenance) string {
	if p == nil {
		return "no record"
	}
	var parts []string
	if p.CPU != "" {
		parts = append(parts, p.CPU+", "+p.ThreadsText()+" threads")
	}
	if p.Backend != "" {
		parts = append(parts, p.Backend)
	}
	if p.Seconds > 0 {
		parts = append(parts, (time.Duration(p.Seconds) * time.Second).Round(time.Minute).String())
	}
	if m := p.PeakRSSMiB(); m != "" {
		parts = append(parts, "peak RSS "+m+" MiB")
	}
	if p.Date != "" {
		parts = append(parts, p.Date)
	}
	if p.Commit != "" {
		parts = append(parts, "commit "+p.ShortCommit())
	}
	if len(parts) == 0 {
		return "no record"
	}
	line := strings.Join(parts, ", ")
	if len(p.Segments) > 0 { // the fields above are the last process's
		segs := make([]string, len(p.Segments))
		for i, s := range p.Segments {
			segs[i] = s.Text()
		}
		line += " (in parts: " + strings.Join(segs, "; ") + ")"
	}
	return line
}

// auditKept recomputes the first rounds of a seeded sample of the kept train stages of
// every checked manifest (each stage once, however many manifests share it) and compares
// their fingerprints with the kept ones (see auditNode); exit 3 unless all pass.
func auditKept(ctx context.Context, graphs []*pipeline.Graph, store *artifacts.Store, f commonFlags, rounds, sample int,
	seed int64, stdout, stderr io.Writer) error {
	backend, err := model.ResolveBackend(f.backend)
	if err != nil {
		return failure("fedpipe reproduced --audit", &manifest.InputError{File: "--backend", Msg: err.Error()})
	}
	var nodes []*pipeline.Node
	seen := map[pipeline.Key]bool{}
	for _, g := range graphs {
		kept, err := keptTrainNodes(g, store)
		if err != nil {
			return failure("fedpipe reproduced --audit", err)
		}
		for _, n := range kept {
			if !seen[n.Key] {
				seen[n.Key] = true
				nodes = append(nodes, n)
			}
		}
	}
	total := len(nodes)
	nodes = sampleNodes(nodes, sample, seed)
	loader := &data.Loader{DataDir: f.data}
	passed, bitwise, crossed, crossPassed := 0, 0, 0, 0
	var cells []auditCell
	for i, n := range nodes {
		fmt.Fprintf(stderr, "audit %d/%d: %s (%d rounds)\n", i+1, len(nodes), n.Name, min(rounds, n.Run.Train.Rounds))
		c, err := auditKeptNode(ctx, n, store, loader, backend, rounds)
		if err != nil {
			return failure("fedpipe reproduced --audit", err)
		}
		cells = append(cells, c)
		if c.Verdict == auditPass {
			passed++
		}
		if c.Bitwise {
			bitwise++
		}
		if c.Cross != "" {
			crossed++
			if c.Cross == crossPass {
				crossPassed++
			}
		}
	}
	if !f.json {
		fmt.Fprint(stdout, auditMarkdown(cells))
		fmt.Fprintf(stdout, "audit: %d of %d kept train results (seed %d) recomputed over their first %d rounds: %d reproduce their fingerprints",
			len(cells), total, seed, rounds, bitwise)
		if crossed > 0 {
			fmt.Fprintf(stdout, "; %d of %d made on other backends pass the cross-backend check (round %d on %s within %g)",
				crossPassed, crossed, train.SketchRound, model.CPUBackend, checkTolerance)
		}
		fmt.Fprintln(stdout)
	}
	if passed != len(cells) {
		return exitErr(exitMismatch)
	}
	return nil
}

// keptHeader names the columns of reproduced's text table (verify.Cell.Row's).
var keptHeader = []string{"method", "cell", "metric", "expected", "measured (mean ± std over seeds)", "diff", "verdict"}

// tablePatterns are the manifests of the papers' tables, as the Makefile's TABLE_MANIFESTS
// names them: reproduced with no MANIFEST checks these.
var tablePatterns = []string{"fedobp-*.yaml", "fedselect-*.yaml", "dmpfl-*.yaml", "table1.yaml"}

// tableManifests lists the table manifests in dir (tablePatterns), sorted, relative to the
// working directory where they are below it.
func tableManifests(dir string) ([]string, error) {
	var paths []string
	for _, p := range tablePatterns {
		m, err := filepath.Glob(filepath.Join(dir, p))
		if err != nil {
			return nil, err
		}
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		return nil, &manifest.InputError{File: dir, Msg: "no table manifests here to check; name them: fedpipe reproduced MANIFEST..."}
	}
	sort.Strings(paths)
	if wd, err := os.Getwd(); err == nil {
		for i, p := range paths {
			if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
				paths[i] = rel
			}
		}
	}
	return paths, nil
}

// noExpect is why a manifest without expect entries is not checked.
const noExpect = "no expect entries"
