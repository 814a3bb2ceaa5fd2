package main

import (
	"fmt"
	"io"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/verify/audit"
)

// auditOptions are verify's --audit flags.
type auditOptions struct {
	rounds       int   // N: rounds to recompute
	sample       int   // K > 0: audit a seeded sample of K kept cells
	seed         int64 // the sample's seed
	quiet, jsonM bool
}

// runAudit audits g's kept train results (audit.Node) and prints the verdicts; it exits
// 3 unless every audited cell passes.
func runAudit(g *pipeline.Graph, store *artifacts.Store, loader *data.Loader, backend string, o auditOptions, stdout, stderr io.Writer) error {
	fail := func(err error) error { return failure("fedpipe verify --audit", err) }
	nodes, err := audit.KeptTrainNodes(g, store)
	if err != nil {
		return fail(err)
	}
	ctx, stop := interruptContext(stderr)
	defer stop()
	progress := func(i, of int, n *pipeline.Node) {
		if !o.quiet && !o.jsonM {
			fmt.Fprintf(stderr, "audit %d/%d: %s (%d rounds)\n", i+1, of, n.Name, min(o.rounds, n.Run.Train.Rounds))
		}
	}
	r, err := audit.Run(nodes, o.sample, o.seed, progress, func(n *pipeline.Node) (audit.Cell, error) {
		return audit.Node(ctx, n, store, loader, backend, o.rounds)
	})
	if err != nil {
		return fail(err)
	}
	passed := r.Counts[audit.Pass]
	if o.jsonM {
		writeJSON(stdout, map[string]any{"manifest": g.Manifest.File, "audit_rounds": o.rounds, "kept": r.Kept,
			"audited": len(r.Cells), "passed": passed, "cells": r.Cells})
	} else {
		fmt.Fprint(stdout, audit.Markdown(r.Cells, model.CheckTolerance))
		fmt.Fprintf(stdout, "\n%d of %d kept train results audited over their first %d rounds: %d passed, %d failed, %d without fingerprints, %d corrupt\n",
			len(r.Cells), r.Kept, o.rounds, passed, r.Counts[audit.Fail], r.Counts[audit.NoPrint], r.Counts[audit.Corrupt])
	}
	if !r.Passed() {
		return exitErr(exitMismatch)
	}
	return nil
}
