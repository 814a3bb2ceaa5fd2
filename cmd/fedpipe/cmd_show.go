package main

import (
	"fmt"

	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
)

// showCmd is `fedpipe show MANIFEST --manifest`: the effective manifest recorded with the
// results (file plus the overrides it ran with); without --manifest it is `fedpipe ls`.
func showCmd(c *call) error {
	args, stdout, stderr := c.args, c.stdout, c.stderr
	fs := c.flags()
	var f commonFlags
	f.register(fs, c.groups)
	asManifest := fs.Bool("manifest", false, "print the effective manifest recorded with the results (the file with the --set overrides it ran with)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: fedpipe show MANIFEST --manifest [flags]\n\nPrints the effective manifest recorded with MANIFEST's results: the file as it was, with the\n--set overrides it ran with applied (with --set here, the results of those overrides; else\nthose of the file's last run). Without --manifest: fedpipe ls.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if !wantsFlag(args, "--manifest") {
		c.groups = lsFlags // it is ls, with ls's flags
		return lsRuns(c, true)
	}
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	_ = asManifest
	if fs.NArg() != 1 {
		return failf(exitInvalid, "fedpipe show: expected one MANIFEST argument, got %d", fs.NArg())
	}
	fail := func(err error) error { return failure("fedpipe show", err) }
	g, _, err := loadGraphSet(fs.Arg(0), f.set, &data.Loader{DataDir: f.data}, f.backend)
	if err != nil {
		return fail(err)
	}
	store, err := f.reader(fs.Arg(0), stderr) // never creates one, never waits for a run
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	b, ok, err := pipeline.RecordedManifest(store, g, len(f.set) == 0)
	if err != nil {
		return fail(err)
	}
	if !ok {
		return fail(fmt.Errorf("%s: no results recorded for this manifest yet (run it first)", fs.Arg(0)))
	}
	if f.json {
		return writeJSON(stdout, map[string]any{"manifest": fs.Arg(0), "effective": string(b)})
	}
	_, _ = stdout.Write(b)
	return nil
}

// wantsFlag says whether args hold flag name (before any "--").
func wantsFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == name || len(a) > len(name) && a[:len(name)+1] == name+"=" {
			return true
		}
	}
	return false
}
