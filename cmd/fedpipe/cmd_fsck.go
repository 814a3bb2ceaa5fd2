package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/storedir"
)

// cmdFsck checks every blob, action and ref of a store.
var cmdFsck = &command{
	name:      "fsck",
	overview:  []string{"fsck [--repair|--salvage] re-hash every blob; check (and heal) every result and ref"},
	usageLine: "fedpipe fsck [--store DIR] [--repair | --salvage]",
	long:      "Re-hashes every blob and checks every action's outputs and every ref. Exits 1 if anything is\nmissing or corrupt: such entries are already treated as misses (a run recomputes the results it\nneeds), but they stay until --repair deletes them or gc drops what no manifest uses.\n--salvage rebuilds a store that Badger cannot open at all.",
	groups:    storeGroup,
	flags:     withFlags(fsckCmd),
}

// fsckFlags are fsck's flags.
type fsckFlags struct {
	commonFlags
	repair, salvage bool
}

func (f *fsckFlags) declare(fs *pflag.FlagSet, g flagGroup) {
	f.commonFlags.declare(fs, g)
	fs.BoolVar(&f.repair, "repair", false, "delete corrupt blobs, broken actions and dangling refs (the next run recomputes what it needs); exit 0 once the store is clean")
	fs.BoolVar(&f.salvage, "salvage", false, "recover a store that cannot be opened: copy every verifiable blob, action and ref into a fresh store, keep the damaged one beside it, and report what was lost")
}

// fsckCmd is `fedpipe fsck`.
func fsckCmd(c *call, f *fsckFlags, _ []string) error {
	stdout, stderr := c.stdout, c.stderr
	sf := &f.storeFlags
	if f.repair && f.salvage {
		return failf(exitInvalid, "fedpipe fsck: --repair and --salvage exclude each other (--salvage also drops what is corrupt)")
	}
	if f.salvage {
		return salvageStore(sf.writeDir(""), stdout, stderr)
	}
	dir, open := sf.writeDir(""), artifacts.Open
	if err := storedir.CheckPath(dir, storedir.How(sf.store)); err != nil {
		return failf(exitCodeOf(err), "fedpipe fsck: %v", err)
	}
	if !f.repair && artifacts.ReadOnly(dir) {
		open = artifacts.OpenReader // a read-only store: checked through a copy, its lock untouched
	}
	o := sf.options(storeNotices("fedpipe fsck", stderr))
	o.NoCompactions = true // fsck merges no table: a damaged block never meets a compaction
	s, err := open(dir, o)
	if err != nil {
		return failf(exitCodeOf(err), "fedpipe fsck: %v%s", err, salvageHint(err))
	}
	defer s.Close()
	if f.repair {
		return repairStore(s, stdout, stderr)
	}
	r, err := s.Fsck()
	if err != nil {
		return failf(exitCodeOf(err), "fedpipe fsck: %v", err)
	}
	for _, p := range r.Problems {
		fmt.Fprintln(stdout, p)
	}
	fmt.Fprintf(stdout, "%d blobs (%d corrupt), %d actions (%d broken), %d refs (%d dangling) in %s\n",
		r.Blobs, r.CorruptBlobs, r.Actions, r.BrokenActions, r.Refs, r.DanglingRefs, s.Dir())
	if !r.OK() {
		return exitErr(exitFailure)
	}
	return nil
}
