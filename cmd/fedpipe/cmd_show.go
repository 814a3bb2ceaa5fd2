package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
)

// cmdShow is `fedpipe show MANIFEST --manifest`: the effective manifest recorded with the
// results (file plus the overrides it ran with); without --manifest it is `fedpipe ls`
// (cmdShowRuns).
var cmdShow = &command{
	name:      "show",
	overview:  []string{"show MANIFEST --manifest  the effective manifest (file + --set) recorded with the results"},
	usageLine: "fedpipe show MANIFEST --manifest [flags]",
	long:      "Prints the effective manifest recorded with MANIFEST's results: the file as it was, with the\n--set overrides it ran with applied (with --set here, the results of those overrides; else\nthose of the file's last run). Without --manifest: fedpipe ls.",
	groups:    manifestGroups,
	flags:     withFlags(showCmd),
	form: func(args []string) *command {
		if !wantsFlag(args, "--manifest") {
			return cmdShowRuns
		}
		return nil
	},
}

// cmdShowRuns is show without --manifest: ls, with ls's flags and show's --manifest, for its help.
var cmdShowRuns = &command{
	name:      "show",
	usageLine: "fedpipe show MANIFEST... [flags]",
	long:      lsLong,
	groups:    lsGroups,
	flags: withFlags(func(c *call, f *showRunsFlags, args []string) error {
		return lsCmd(c, &f.lsFlags, args)
	}),
}

// showRunsFlags are show's flags without --manifest: ls's, and --manifest, unset.
type showRunsFlags struct {
	lsFlags
	manifest bool
}

func (f *showRunsFlags) declare(fs *pflag.FlagSet, g flagGroup) {
	f.lsFlags.declare(fs, g)
	fs.BoolVar(&f.manifest, "manifest", false, "print the effective manifest recorded with the results instead")
}

// showFlags are show's flags.
type showFlags struct {
	commonFlags
	manifest bool // always set: without it, show is cmdShowRuns
}

func (f *showFlags) declare(fs *pflag.FlagSet, g flagGroup) {
	f.commonFlags.declare(fs, g)
	fs.BoolVar(&f.manifest, "manifest", false, "print the effective manifest recorded with the results (the file with the --set overrides it ran with)")
}

// showCmd is `fedpipe show MANIFEST --manifest`.
func showCmd(c *call, f *showFlags, args []string) error {
	stdout, stderr := c.stdout, c.stderr
	if len(args) != 1 {
		return failf(exitInvalid, "fedpipe show: expected one MANIFEST argument, got %d", len(args))
	}
	fail := func(err error) error { return failure("fedpipe show", err) }
	g, _, err := loadGraphSet(args[0], f.set, &data.Loader{DataDir: f.data}, f.backend)
	if err != nil {
		return fail(err)
	}
	store, err := f.reader(args[0], stderr) // never creates one, never waits for a run
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	b, ok, err := pipeline.RecordedManifest(store, g, len(f.set) == 0)
	if err != nil {
		return fail(err)
	}
	if !ok {
		return fail(fmt.Errorf("%s: no results recorded for this manifest yet (run it first)", args[0]))
	}
	if f.json {
		return writeJSON(stdout, map[string]any{"manifest": args[0], "effective": string(b)})
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
