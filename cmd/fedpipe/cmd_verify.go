package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/artifacts/storedir"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/verify"
	"github.com/fedpipe/fedpipe/verify/kept"
)

// exitMismatch is verify's exit code when a cell fails or was never computed.
const exitMismatch = 3

// cmdVerify compares the measured figures of a manifest's runs with its expect entries, and
// with --audit recomputes kept train results' first rounds against their fingerprints.
var cmdVerify = &command{
	name:      "verify",
	overview:  []string{"verify MANIFEST [--run]   compare measured figures with the manifest's expect entries"},
	usageLine: "fedpipe verify MANIFEST [flags]",
	long:      "Compares the measured figures of MANIFEST's runs with its expect entries: per cell, expected vs\nmeasured (mean ± std over seeds), the difference and a verdict. Exits 3 if any cell fails or has\nnot been computed (use --run). Then each of its claims (what the paper concludes from the table) with a\nverdict: holds, reversed, undecided or not computable yet, with the effect, its interval and the test; claims\nnever change the exit code. Where the store holds none of the cells but ../reproduced keeps some, one\nline names the command that reads them (fedpipe reproduced MANIFEST).\n\nWith --audit N it checks the kept train results themselves instead: each (or a seeded sample,\n--audit-sample K --audit-seed S) is retrained for its first N rounds with its full configuration,\nnothing stored, and the state's digest after every round is compared with the one recorded with\nthe result. Exits 3 if any differs (naming the cell, the round and both digests), if a result\nrecords no fingerprints (computed by an older fedpipe), or if its stored bytes fail their digest.",
	groups:    manifestGroups | quietGroup | onlyExpectGroup,
	flags:     withFlags(verifyCmd),
}

// verifyFlags are verify's flags.
type verifyFlags struct {
	commonFlags
	runFirst           bool
	audit, auditSample int
	auditSeed          int64
}

func (f *verifyFlags) declare(fs *pflag.FlagSet, g flagGroup) {
	f.commonFlags.declare(fs, g)
	fs.BoolVar(&f.runFirst, "run", false, "run the manifest first (cached stages are not recomputed)")
	fs.IntVar(&f.audit, "audit", 0, "instead of the expectations, recompute the first N rounds of every kept train result and compare their per-round fingerprints with the recorded ones")
	fs.IntVar(&f.auditSample, "audit-sample", 0, "with --audit: audit a seeded sample of this many kept train results (0: all)")
	fs.Int64Var(&f.auditSeed, "audit-seed", 0, "with --audit-sample: the sample's seed")
}

// verifyCmd is `fedpipe verify MANIFEST`.
func verifyCmd(c *call, f *verifyFlags, args []string) error {
	stdout, stderr := c.stdout, c.stderr
	if len(args) != 1 {
		return failf(exitInvalid, "fedpipe verify: expected one MANIFEST argument, got %d", len(args))
	}
	if f.audit < 0 || f.auditSample < 0 || (f.audit == 0 && (f.auditSample > 0 || c.fs.Changed("audit-seed"))) {
		return failf(exitInvalid, "fedpipe verify: --audit takes a positive number of rounds; --audit-sample and --audit-seed need --audit")
	}
	path := args[0]
	fail := func(err error) error { return failure("fedpipe verify", err) }
	g, backend, err := loadGraphSet(path, f.set, &data.Loader{DataDir: f.data}, f.backend)
	if err != nil {
		return fail(err)
	}
	g, onlyRuns, err := pipeline.OnlyExpect(g, f.only)
	if err != nil {
		return fail(err)
	}
	if f.runFirst {
		runArgs := []string{path, "--lock-timeout", f.lockTimeout.String()}
		if f.quiet {
			runArgs = append(runArgs, "--quiet")
		}
		for name, v := range map[string]string{"--store": f.store, "--data": f.data, "--backend": f.backend} {
			if v != "" {
				runArgs = append(runArgs, name, v)
			}
		}
		for _, s := range f.set {
			runArgs = append(runArgs, "--set", s)
		}
		if len(onlyRuns) > 0 {
			runArgs = append(runArgs, "--only", strings.Join(onlyRuns, ","))
		}
		if err := (&call{name: "run", args: runArgs, stdout: stderr, stderr: stderr}).start(cmdRun); err != nil {
			return err
		}
	}
	if f.audit > 0 {
		store, err := f.reader(path, stderr) // never creates one
		if err != nil {
			return fail(err)
		}
		defer store.Close()
		return runAudit(g, store, &data.Loader{DataDir: f.data}, backend, auditOptions{rounds: f.audit, sample: f.auditSample,
			seed: f.auditSeed, quiet: f.quiet, jsonM: f.json}, stdout, stderr)
	}
	if len(g.Manifest.Expect) == 0 {
		msg := "the manifest has no expect entries to verify"
		if len(f.only) > 0 {
			msg = fmt.Sprintf("the manifest has no expect entries of %s to verify", strings.Join(f.only, ", "))
		}
		return fail(&manifest.InputError{File: path, Field: "expect", Msg: msg})
	}
	store, err := f.reader(path, stderr) // never creates one, never waits for a run
	if err != nil {
		var none *storedir.NoStoreError
		if errors.As(err, &none) {
			if hint := keptHint(path, g.Manifest.Name, verify.Tally{Missing: len(g.Manifest.Expect)}); hint != "" {
				err = fmt.Errorf("%w\n%s", err, strings.Replace(hint, "none of these cells is in this store", "there is no store here", 1))
			}
		}
		return fail(err)
	}
	defer store.Close()
	cells, err := verify.Verify(g, store)
	if err != nil {
		return fail(err)
	}
	tally := verify.TallyOf(cells)
	if len(onlyRuns) > 0 {
		g.Manifest.Claims = claimsWithin(g.Manifest, onlyRuns)
	}
	claims, err := verify.Claims([]*pipeline.Graph{g}, store)
	if err != nil {
		return fail(err)
	}
	hint := keptHint(path, g.Manifest.Name, tally)
	if f.json {
		writeJSON(stdout, map[string]any{"manifest": path, "cells": cells, "passed": tally.Passed,
			"failed": tally.Failed, "missing": tally.Missing, "claims": claims, "claims_summary": verify.TallyClaims(claims).Line(),
			"kept_hint": hint})
	} else {
		fmt.Fprint(stdout, verify.Markdown(cells))
		fmt.Fprintf(stdout, "\n%s\n", tally)
		if len(claims) > 0 {
			fmt.Fprintln(stdout)
			for _, v := range claims {
				fmt.Fprintf(stdout, "claim %s\n", v.Line())
			}
			fmt.Fprintln(stdout, verify.TallyClaims(claims).Line())
		}
		if hint != "" {
			fmt.Fprintln(stdout, hint)
		}
	}
	if tally.Unexplained() > 0 {
		return exitErr(exitMismatch)
	}
	return nil
}

// keptHint is the line verify adds when the store holds no result of the manifest's cells
// but the kept-results directory beside its folder (../reproduced, as `fedpipe reproduced`
// finds it) keeps some: the command that reads them. "" otherwise.
func keptHint(path, name string, t verify.Tally) string {
	if t.Passed+t.Failed > 0 || t.Missing == 0 {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	dir := filepath.Join(filepath.Dir(filepath.Dir(abs)), defaultKept)
	n, err := kept.Entries(dir, name)
	if err != nil || n == 0 {
		return ""
	}
	keptDir := dir
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, dir); err == nil && !strings.HasPrefix(rel, "..") {
			keptDir = rel
		}
	}
	cmd := "fedpipe reproduced " + path
	if keptDir != defaultKept {
		cmd += " --kept " + keptDir
	}
	return fmt.Sprintf("none of these cells is in this store, but %s/ keeps paper-scale results of this manifest (%d stage results): `%s` reads them", keptDir, n, cmd)
}

// claimsWithin keeps the claims of m all of whose methods are among labels (verify --only):
// a best-of-column claim judged on part of its column would read as holding on the part.
func claimsWithin(m *manifest.Manifest, labels []string) []manifest.Claim {
	var all []string
	for _, ms := range m.Methods {
		all = append(all, ms.Name)
	}
	var out []manifest.Claim
	for _, c := range m.Claims {
		ok := true
		for _, p := range c.Pairs(all) {
			ok = ok && slices.Contains(labels, p[0]) && slices.Contains(labels, p[1])
		}
		if ok {
			out = append(out, c)
		}
	}
	return out
}
