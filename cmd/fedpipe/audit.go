package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
	"github.com/fedpipe/fedpipe/stages/train"
)

// Audit verdicts (besides verify.Pass and verify.Fail).
const (
	auditPass    = "pass"
	auditFail    = "fail"
	auditNoPrint = "no fingerprints" // the result predates fingerprints, or lacks some rounds
	auditCorrupt = "corrupt"         // a recorded output no longer matches its digest
	// auditUnchecked: made on a backend this machine lacks, and no cross-backend check could
	// stand in (the result keeps no sketch): nothing was recomputed.
	auditUnchecked = "unchecked"
)

// Cross-backend check verdicts (auditCell.Cross).
const (
	crossPass     = "pass"
	crossFail     = "fail"
	crossNoSketch = "no sketch kept" // the result predates sketches, or continued one that did
)

// auditCell is one kept train result's audit.
type auditCell struct {
	Cell string `json:"cell"`
	Key  string `json:"key"`
	// Rounds is how many rounds were recomputed (the audit's N, or fewer for a shorter run).
	Rounds  int    `json:"rounds"`
	Verdict string `json:"verdict"`
	// Round, Recorded and Recomputed name the first round whose digests differ (fail).
	Round      int    `json:"round,omitempty"`
	Recorded   string `json:"recorded,omitempty"`
	Recomputed string `json:"recomputed,omitempty"`
	Note       string `json:"note,omitempty"`
	// Provenance is the provenance recorded with the audited result.
	Provenance *pipeline.Provenance `json:"provenance,omitempty"`
	// Backend is the family of the backend that made the result ("fpfast", "xla-cuda").
	Backend string `json:"backend,omitempty"`
	// Bitwise says the first rounds were recomputed on that backend with equal fingerprints.
	Bitwise bool `json:"bit_for_bit,omitempty"`
	// Cross is the cross-backend check of a result made on a backend other than the
	// reference one (crossCheck): empty for a reference result.
	Cross     string            `json:"cross_check,omitempty"`
	CrossDiff *train.SketchDiff `json:"cross_check_diff,omitempty"`
}

// auditOptions are verify's --audit flags.
type auditOptions struct {
	rounds       int   // N: rounds to recompute
	sample       int   // K > 0: audit a seeded sample of K kept cells
	seed         int64 // the sample's seed
	quiet, jsonM bool
}

// keptTrainNodes lists g's train stages that have a result recorded in store, in graph
// order (a record whose outputs no longer verify is kept too: the audit reports it).
func keptTrainNodes(g *pipeline.Graph, store *artifacts.Store) ([]*pipeline.Node, error) {
	var out []*pipeline.Node
	for _, n := range g.Nodes {
		if n.Kind != manifest.KindTrain {
			continue
		}
		if _, ok, err := store.ActionMeta(artifacts.Digest(n.Key)); err != nil {
			return nil, err
		} else if ok {
			out = append(out, n)
		}
	}
	return out, nil
}

// sampleNodes picks k of nodes with a generator seeded by seed (the same k, seed and
// nodes pick the same cells), kept in graph order.
func sampleNodes(nodes []*pipeline.Node, k int, seed int64) []*pipeline.Node {
	if k <= 0 || k >= len(nodes) {
		return nodes
	}
	idx := rand.New(rand.NewPCG(uint64(seed), 0x61756469740a)).Perm(len(nodes))[:k]
	sort.Ints(idx)
	out := make([]*pipeline.Node, k)
	for i, j := range idx {
		out[i] = nodes[j]
	}
	return out
}

// auditNode recomputes the first rounds of train stage n and compares their fingerprints
// with those recorded in its result. It trains with the run's full configuration and stops
// after the last audited round (train.Config.StopAfter), so that what depends on the run's
// total rounds (learning-rate schedules, DM-PFL's phases, FedSelect's and FedDST's
// schedules) is what the recorded run had. Nothing is stored: the recomputed state is
// compared and dropped.
func auditNode(ctx context.Context, n *pipeline.Node, store *artifacts.Store, loader *data.Loader, backend string, rounds int) (auditCell, error) {
	key := artifacts.Digest(n.Key)
	c := auditCell{Cell: n.Name, Key: n.Key.String()}
	if m, ok, err := store.ActionMeta(key); err != nil {
		return c, err
	} else if ok {
		if p, ok := pipeline.ProvenanceOf(artifacts.Action{Meta: m}); ok {
			c.Provenance = &p
		}
	}
	b, err := results.ReadBlob(store, key, results.OutTrainFingerprints)
	switch {
	case errors.Is(err, results.ErrNoAction):
		c.Verdict, c.Note = auditCorrupt, "a recorded output is missing or fails its digest check; the result is refused"
		return c, nil
	case errors.Is(err, results.ErrNoOutput):
		c.Verdict, c.Note = auditNoPrint, "the result was computed before fedpipe recorded fingerprints"
		return c, nil
	case errors.Is(err, results.ErrBlob):
		c.Verdict, c.Note = auditCorrupt, err.Error()
		return c, nil
	case err != nil:
		return c, err
	}
	recorded, err := train.DecodeFingerprints(b)
	if err != nil {
		c.Verdict, c.Note = auditFail, "unreadable fingerprints: "+err.Error()
		return c, nil
	}
	r := n.Run
	c.Rounds = min(rounds, r.Train.Rounds)
	byRound := map[int]train.Fingerprint{}
	for _, f := range recorded {
		byRound[f.Round] = f
	}
	for k := 1; k <= c.Rounds; k++ {
		if _, ok := byRound[k]; !ok {
			c.Verdict, c.Note = auditNoPrint, fmt.Sprintf("no fingerprint recorded for round %d (continued from an older result)", k)
			return c, nil
		}
	}
	st, err := recomputePrefix(ctx, n, loader, backend, c.Rounds)
	if err != nil {
		return c, err
	}
	c.Verdict = auditPass
	for _, f := range st.Fingerprints {
		if f.Round > c.Rounds {
			break
		}
		if want := byRound[f.Round]; want.Digest != f.Digest {
			c.Verdict, c.Round, c.Recorded, c.Recomputed = auditFail, f.Round, want.Hex(), f.Hex()
			break
		}
	}
	if c.Verdict == auditPass && len(st.Fingerprints) < c.Rounds {
		c.Verdict, c.Note = auditFail, fmt.Sprintf("the recomputation recorded %d fingerprints for %d rounds", len(st.Fingerprints), c.Rounds)
	}
	return c, nil
}

// recomputePrefix trains the first rounds of train stage n on backend with the run's full
// configuration, stopping after round rounds (train.Config.StopAfter), on the data and
// partition the stage was planned with.
func recomputePrefix(ctx context.Context, n *pipeline.Node, loader *data.Loader, backend string, rounds int) (*train.State, error) {
	r := n.Run
	ds, err := loader.Load(r.Dataset)
	if err != nil {
		return nil, err
	}
	if n.Data != nil && ds.Digest != n.Data.Digest {
		return nil, fmt.Errorf("%s: dataset %s changed since planning (digest %s, planned %s)", n.Name, ds.Name, ds.Digest, n.Data.Digest)
	}
	assign, err := partition.Make(ds, r.Dataset, r.Partition, r.PartitionSeed()) // as the partition stage draws it (stages/partition_kind.go)
	if err != nil {
		return nil, err
	}
	st, err := train.Run(ctx, train.Config{Run: r, Data: ds, Assign: assign, Backend: backend,
		Lockstep: train.LockstepDefault(backend), StopAfter: rounds})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.Name, err)
	}
	return st, nil
}

// crossCheck checks a kept train result made on another backend against the reference
// CPU backend: it recomputes round train.SketchRound on fpfast and compares the sketch of
// that state with the one kept with the result (train.CompareSketches: per tensor, the
// relative difference of its norm and projections), passing when no tensor's exceeds
// `backend --check`'s tolerance. Two backends round differently, so their bits differ, but
// a genuine result of either lies within the tolerance; a forged or damaged one does not.
func crossCheck(ctx context.Context, n *pipeline.Node, store *artifacts.Store, loader *data.Loader) (string, *train.SketchDiff, error) {
	b, err := results.ReadBlob(store, artifacts.Digest(n.Key), results.OutTrainSketch)
	switch {
	case errors.Is(err, results.ErrNoAction):
		return crossFail, nil, nil
	case errors.Is(err, results.ErrNoOutput):
		return crossNoSketch, nil, nil
	case errors.Is(err, results.ErrBlob):
		return crossFail, &train.SketchDiff{Mismatch: err.Error()}, nil
	case err != nil:
		return "", nil, err
	}
	kept, err := train.DecodeSketch(b)
	if err != nil {
		return crossFail, &train.SketchDiff{Mismatch: err.Error()}, nil
	}
	st, err := recomputePrefix(ctx, n, loader, model.CPUBackend, kept.Round)
	if err != nil {
		return "", nil, err
	}
	if st.Sketch == nil {
		return crossFail, &train.SketchDiff{Mismatch: fmt.Sprintf("the recomputation kept no sketch of round %d", kept.Round)}, nil
	}
	diff := train.CompareSketches(st.Sketch, kept)
	if !diff.OK(checkTolerance) {
		return crossFail, &diff, nil
	}
	return crossPass, &diff, nil
}

// crossText describes a cross-backend check for the audit's table.
func crossText(c auditCell) string {
	d := c.CrossDiff
	switch {
	case c.Cross == "":
		return ""
	case d == nil:
		return "cross-backend check: " + c.Cross
	case d.Mismatch != "":
		return "cross-backend check: " + c.Cross + " (" + d.Mismatch + ")"
	}
	return fmt.Sprintf("cross-backend check: %s (round 1 on %s against the kept sketch: largest relative difference %.2g, %s, of %d tensors; tolerance %g)",
		c.Cross, model.CPUBackend, d.Worst, d.WorstTensor, d.Tensors, checkTolerance)
}

// backendHere is model.BackendHere; tests replace it to play a backend this machine lacks.
var backendHere = model.BackendHere

// auditKeptNode audits one kept train result of `fedpipe reproduced --audit`: bit for bit
// (auditNode) on the backend that made it when that backend is here (primary, the
// configuration the reference graph was built with, or model.BackendHere's), and, for a
// result of a backend other than the reference one, the cross-backend check (crossCheck).
// A result of a backend this machine lacks passes on the cross-backend check alone, and
// says so.
func auditKeptNode(ctx context.Context, n *pipeline.Node, store *artifacts.Store, loader *data.Loader, primary string, rounds int) (auditCell, error) {
	fam := pipeline.NodeFamily(n)
	here, why := primary, ""
	if n.Backend != model.BackendID(primary) {
		here, why = backendHere(n.Backend)
	}
	var c auditCell
	var err error
	if here != "" {
		if c, err = auditNode(ctx, n, store, loader, here, rounds); err != nil {
			return c, err
		}
		c.Bitwise = c.Verdict == auditPass
	} else {
		c = auditCell{Cell: n.Name, Key: n.Key.String(), Verdict: auditUnchecked, Note: "not audited bit for bit: " + why}
	}
	c.Backend = fam
	if fam == pipeline.ReferenceFamily {
		return c, nil
	}
	c.Cross, c.CrossDiff, err = crossCheck(ctx, n, store, loader)
	if err != nil {
		return c, err
	}
	switch {
	case c.Cross == crossFail:
		c.Verdict = auditFail
	case c.Cross == crossPass && c.Verdict == auditUnchecked:
		c.Verdict = auditPass
	}
	return c, nil
}

// runAudit audits g's kept train results (see auditNode) and prints the verdicts; it
// exits 3 unless every audited cell passes.
func runAudit(g *pipeline.Graph, store *artifacts.Store, loader *data.Loader, backend string, o auditOptions, stdout, stderr io.Writer) error {
	fail := func(err error) error { return failure("fedpipe verify --audit", err) }
	nodes, err := keptTrainNodes(g, store)
	if err != nil {
		return fail(err)
	}
	kept := len(nodes)
	nodes = sampleNodes(nodes, o.sample, o.seed)
	ctx, stop := interruptContext(stderr)
	defer stop()
	var cells []auditCell
	counts := map[string]int{}
	for i, n := range nodes {
		if !o.quiet && !o.jsonM {
			fmt.Fprintf(stderr, "audit %d/%d: %s (%d rounds)\n", i+1, len(nodes), n.Name, min(o.rounds, n.Run.Train.Rounds))
		}
		c, err := auditNode(ctx, n, store, loader, backend, o.rounds)
		if err != nil {
			return fail(err)
		}
		cells = append(cells, c)
		counts[c.Verdict]++
	}
	passed := counts[auditPass]
	if o.jsonM {
		writeJSON(stdout, map[string]any{"manifest": g.Manifest.File, "audit_rounds": o.rounds, "kept": kept,
			"audited": len(cells), "passed": passed, "cells": cells})
	} else {
		fmt.Fprint(stdout, auditMarkdown(cells))
		fmt.Fprintf(stdout, "\n%d of %d kept train results audited over their first %d rounds: %d passed, %d failed, %d without fingerprints, %d corrupt\n",
			len(cells), kept, o.rounds, passed, counts[auditFail], counts[auditNoPrint], counts[auditCorrupt])
	}
	if passed != len(cells) {
		return exitErr(exitMismatch)
	}
	return nil
}

// auditMarkdown lays the audited cells out as a table; a failure names its first differing
// round and both digests.
func auditMarkdown(cells []auditCell) string {
	var b strings.Builder
	b.WriteString("| cell | rounds | verdict | detail |\n|---|---:|---|---|\n")
	for _, c := range cells {
		detail := c.Note
		if c.Round > 0 {
			detail = fmt.Sprintf("round %d: recorded %s, recomputed %s", c.Round, c.Recorded, c.Recomputed)
		}
		if x := crossText(c); x != "" {
			detail = strings.TrimPrefix(detail+"; "+x, "; ")
		}
		cell := c.Cell
		if c.Backend != "" && c.Backend != pipeline.ReferenceFamily {
			cell += " (made on " + c.Backend + ")"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", mdCell(cell), c.Rounds, c.Verdict, mdCell(detail))
	}
	return b.String()
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
