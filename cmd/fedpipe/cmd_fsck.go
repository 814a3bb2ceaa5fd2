package main

import (
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/storedir"
)

// fsck checks every blob, action and ref of a store.
func fsckCmd(c *call) error {
	args, stdout, stderr := c.args, c.stdout, c.stderr
	fs := c.flags()
	var f commonFlags
	f.register(fs, c.groups)
	sf := &f.storeFlags
	repair := fs.Bool("repair", false, "delete corrupt blobs, broken actions and dangling refs (the next run recomputes what it needs); exit 0 once the store is clean")
	salvage := fs.Bool("salvage", false, "recover a store that cannot be opened: copy every verifiable blob, action and ref into a fresh store, keep the damaged one beside it, and report what was lost")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: fedpipe fsck [--store DIR] [--repair | --salvage]\n\nRe-hashes every blob and checks every action's outputs and every ref. Exits 1 if anything is\nmissing or corrupt: such entries are already treated as misses (a run recomputes the results it\nneeds), but they stay until --repair deletes them or gc drops what no manifest uses.\n--salvage rebuilds a store that Badger cannot open at all.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *repair && *salvage {
		return failf(exitInvalid, "fedpipe fsck: --repair and --salvage exclude each other (--salvage also drops what is corrupt)")
	}
	if *salvage {
		return salvageStore(sf.writeDir(""), stdout, stderr)
	}
	dir, open := sf.writeDir(""), artifacts.Open
	if err := storedir.CheckPath(dir, storedir.How(sf.store)); err != nil {
		return failf(exitCodeOf(err), "fedpipe fsck: %v", err)
	}
	if !*repair && artifacts.ReadOnly(dir) {
		open = artifacts.OpenReader // a read-only store: checked through a copy, its lock untouched
	}
	o := sf.options(storeNotices("fedpipe fsck", stderr))
	o.NoCompactions = true // fsck merges no table: a damaged block never meets a compaction
	s, err := open(dir, o)
	if err != nil {
		return failf(exitCodeOf(err), "fedpipe fsck: %v%s", err, salvageHint(err))
	}
	defer s.Close()
	if *repair {
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
