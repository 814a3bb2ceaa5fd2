package main

import (
	"fmt"

	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results/listing"
	"github.com/fedpipe/fedpipe/stages/data"
)

// lsCmd lists every run of the manifests: one row per run.
func lsCmd(c *call) error { return lsRuns(c, false) }

// lsRuns is ls, and show without --manifest (showFlag: declare show's --manifest, for its
// help).
func lsRuns(c *call, showFlag bool) error {
	name, args, stdout, stderr := c.name, c.args, c.stdout, c.stderr
	fs := c.flags()
	var f commonFlags
	f.register(fs, c.groups)
	asCSV := fs.Bool("csv", false, "print CSV instead of a table")
	evals := fs.Bool("evals", false, "one row per evaluation round of each cached run instead: test accuracy pooled and averaged over clients, before and after fine-tuning (FL-bench's logged 'before -> after'), and where the manifest records the authors' log of the method (logs:) the logged pooled figures and kept − logged; with --json, each run's \"evals\"")
	withProv := fs.Bool("provenance", false, "add the train stage's provenance to the table (commit, backend, threads, wall time, peak RSS, date); --csv and --json always carry it")
	if showFlag {
		fs.Bool("manifest", false, "print the effective manifest recorded with the results instead")
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: fedpipe %s MANIFEST... [flags]\n\nLists every run of the MANIFESTs, one row each: its label, method, seed, every swept parameter\nas a column, its state — cached (its evaluation is in the store), stale (it ran, but an input\nchanged since) or missing (never ran) — and its final and best test accuracy (%%) when cached.\nRuns nothing.\n\nFlags:\n%s", name, fs.FlagUsages())
	}
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return &exitError{code: exitInvalid, msg: fmt.Sprintf("fedpipe %s: expected MANIFEST...", name),
			hint: fmt.Sprintf("Run 'fedpipe %s --help' for its flags.", name)}
	}
	fail := func(err error) error { return failure("fedpipe "+name, err) }
	loader := &data.Loader{DataDir: f.data}
	var graphs []*pipeline.Graph
	for _, path := range fs.Args() {
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
	store, err := f.reader(fs.Arg(0), stderr) // never creates one, never waits for a run
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
		if *evals {
			if err := listing.WithEvals(r, g, store); err != nil {
				return fail(err)
			}
		}
		rows = append(rows, r...)
	}
	switch {
	case f.json:
		return writeJSON(stdout, map[string]any{"runs": rows})
	case *evals && *asCSV:
		return csvErr(listing.WriteEvalsCSV(stdout, rows))
	case *evals:
		listing.WriteEvalsTable(stdout, rows)
		return nil
	case *asCSV:
		return csvErr(listing.WriteCSV(stdout, rows))
	}
	listing.WriteTable(stdout, rows, *withProv)
	return nil
}

// csvErr is how ls ends when writing its CSV failed (a closed pipe): exit 1, no message.
func csvErr(err error) error {
	if err != nil {
		return exitErr(exitFailure)
	}
	return nil
}
