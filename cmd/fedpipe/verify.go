package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/verify"
)

// exitMismatch is verify's exit code when a cell fails or was never computed.
const exitMismatch = 3

func verifyCmd(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("verify", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var f commonFlags
	f.register(fs, "verify")
	runFirst := fs.Bool("run", false, "run the manifest first (cached stages are not recomputed)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: fedpipe verify MANIFEST [flags]\n\nCompares the measured figures of MANIFEST's runs with its expect entries: per cell, expected vs\nmeasured (mean ± std over seeds), the difference and a verdict. Exits 3 if any cell fails or has\nnot been computed (use --run).\n\nFlags:\n%s", fs.FlagUsages())
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "fedpipe verify: expected one MANIFEST argument, got %d\n", fs.NArg())
		return exitInvalid
	}
	path := fs.Arg(0)
	if *runFirst {
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
		if code := runOrStatus("run", runArgs, stderr, stderr); code != exitOK {
			return code
		}
	}
	fail := func(err error) int { return failure("fedpipe verify", err, f.json, stdout, stderr) }
	g, _, err := loadGraphSet(path, f.set, &data.Loader{DataDir: f.data}, f.backend)
	if err != nil {
		return fail(err)
	}
	if len(g.Manifest.Expect) == 0 {
		return fail(&manifest.InputError{File: path, Field: "expect", Msg: "the manifest has no expect entries to verify"})
	}
	store, err := artifacts.OpenReader(artifacts.DefaultDir(f.store), artifacts.Options{LockTimeout: f.lockTimeout})
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	cells, err := verify.Verify(g, store)
	if err != nil {
		return fail(err)
	}
	counts := map[string]int{}
	for _, c := range cells {
		counts[c.Verdict]++
	}
	if f.json {
		writeJSON(stdout, map[string]any{"manifest": path, "cells": cells, "passed": counts[verify.Pass],
			"failed": counts[verify.Fail], "missing": counts[verify.Missing]})
	} else {
		fmt.Fprint(stdout, verify.Markdown(cells))
		fmt.Fprintf(stdout, "\n%d passed, %d failed, %d not computed\n", counts[verify.Pass], counts[verify.Fail], counts[verify.Missing])
	}
	if counts[verify.Fail]+counts[verify.Missing] > 0 {
		return exitMismatch
	}
	return exitOK
}
