package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results/listing"
	"github.com/fedpipe/fedpipe/stages/data"
)

// cmdLs lists every run of the manifests: one row per run.
var cmdLs = &command{
	name:      "ls",
	overview:  []string{"ls MANIFEST...            one row per run: swept parameters, cached/stale/missing, metrics"},
	usageLine: "fedpipe ls MANIFEST... [flags]",
	long:      lsLong,
	groups:    lsGroups,
	flags:     withFlags(lsCmd),
}

// lsLong is what ls does, in its help and in that of show without --manifest.
const lsLong = "Lists every run of the MANIFESTs, one row each: its label, method, seed, every swept parameter\nas a column, its state — cached (its evaluation is in the store), stale (it ran, but an input\nchanged since) or missing (never ran) — and its final and best test accuracy (%) when cached.\nRuns nothing."

// lsFlags are ls's flags.
type lsFlags struct {
	commonFlags
	csv, evals, provenance bool
}

func (f *lsFlags) declare(fs *pflag.FlagSet, g flagGroup) {
	f.commonFlags.declare(fs, g)
	fs.BoolVar(&f.csv, "csv", false, "print CSV instead of a table")
	fs.BoolVar(&f.evals, "evals", false, "one row per evaluation round of each cached run instead: test accuracy pooled and averaged over clients, before and after fine-tuning (FL-bench's logged 'before -> after'), and where the manifest records the authors' log of the method (logs:) the logged pooled figures and kept − logged; with --json, each run's \"evals\"")
	fs.BoolVar(&f.provenance, "provenance", false, "add the train stage's provenance to the table (commit, backend, threads, wall time, peak RSS, date); --csv and --json always carry it")
}

// lsCmd is ls, and show without --manifest (cmdShowRuns).
func lsCmd(c *call, f *lsFlags, args []string) error {
	name, stdout, stderr := c.name, c.stdout, c.stderr
	if len(args) == 0 {
		return &exitError{code: exitInvalid, msg: fmt.Sprintf("fedpipe %s: expected MANIFEST...", name),
			hint: fmt.Sprintf("Run 'fedpipe %s --help' for its flags.", name)}
	}
	fail := func(err error) error { return failure("fedpipe "+name, err) }
	loader := &data.Loader{DataDir: f.data}
	var graphs []*pipeline.Graph
	for _, path := range args {
		g, _, err := loadGraphSet(path, f.set, loader, f.backend)
		if err != nil {
			return fail(err)
		}
		graphs = append(graphs, g)
	}
	graphs, err := pipeline.OnlyGraphs(graphs, f.only)
	if err != nil {
		return fail(err)
	}
	store, err := f.reader(args[0], stderr) // never creates one, never waits for a run
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	var rows []listing.Row
	for _, g := range graphs {
		r, err := listing.List(g, store, listing.CachedIntervals)
		if err != nil {
			return fail(err)
		}
		if f.evals {
			if err := listing.WithEvals(r, g, store); err != nil {
				return fail(err)
			}
		}
		rows = append(rows, r...)
	}
	switch {
	case f.json:
		return writeJSON(stdout, map[string]any{"runs": rows})
	case f.evals && f.csv:
		return csvErr(listing.WriteEvalsCSV(stdout, rows))
	case f.evals:
		listing.WriteEvalsTable(stdout, rows)
		return nil
	case f.csv:
		return csvErr(listing.WriteCSV(stdout, rows))
	}
	listing.WriteTable(stdout, rows, f.provenance)
	return nil
}

// csvErr is how ls ends when writing its CSV failed (a closed pipe): exit 1, no message.
func csvErr(err error) error {
	if err != nil {
		return exitErr(exitFailure)
	}
	return nil
}
