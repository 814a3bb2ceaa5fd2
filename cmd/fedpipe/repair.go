package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
)

// salvageHint is appended to a failure to open a store that Badger itself refused.
func salvageHint(err error) string {
	if errors.Is(err, artifacts.ErrLocked) || errors.Is(err, artifacts.ErrNoSpace) || errors.Is(err, syscall.ENOSPC) {
		return ""
	}
	return "\n(fedpipe fsck --salvage copies every intact result into a fresh store)"
}

// repairStore deletes what fsck finds corrupt and checks the store again.
func repairStore(s *artifacts.Store, stdout, stderr io.Writer) error {
	r, err := s.Repair()
	if err != nil {
		return failf(exitCodeOf(err), "fedpipe fsck: %v", err)
	}
	for _, p := range r.Problems {
		fmt.Fprintln(stdout, p)
	}
	after, err := s.Fsck()
	if err != nil {
		return failf(exitCodeOf(err), "fedpipe fsck: %v", err)
	}
	fmt.Fprintf(stdout, "repaired %s: deleted %d corrupt blobs, %d corrupt chunks, %d broken actions, %d dangling refs; now %d blobs, %d actions, %d refs, all intact\n",
		s.Dir(), r.DeletedBlobs, r.DeletedChunks, r.DeletedActions, r.DeletedRefs, after.Blobs, after.Actions, after.Refs)
	if !after.OK() {
		for _, p := range after.Problems {
			fmt.Fprintln(stderr, "fedpipe fsck: still wrong after repair:", p)
		}
		return exitErr(exitFailure)
	}
	return nil
}

// salvageStore rebuilds dir from what can be read of it: the recovered store takes dir's
// place and the damaged one is kept as dir.damaged-TIME.
func salvageStore(dir string, stdout, stderr io.Writer) error {
	dir = filepath.Clean(dir)
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err != nil {
		return failf(exitFailure, "fedpipe fsck: %s is not a store (no MANIFEST): nothing to salvage", dir)
	}
	stamp := time.Now().UTC().Format("20060102T150405")
	tmp := dir + ".salvaged-" + stamp
	r, err := artifacts.Salvage(dir, tmp, func(f string, a ...any) {})
	if err != nil {
		os.RemoveAll(tmp)
		return failf(exitCodeOf(err), "fedpipe fsck: salvage %s: %v", dir, err)
	}
	damaged := dir + ".damaged-" + stamp
	if err := os.Rename(dir, damaged); err != nil {
		return failf(exitFailure, "fedpipe fsck: salvaged into %s, but could not move the damaged store aside: %v", tmp, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return failf(exitFailure, "fedpipe fsck: salvaged into %s, but could not put it in place of %s: %v", tmp, dir, err)
	}
	for _, f := range r.Fixes {
		fmt.Fprintln(stdout, "fixed:", f)
	}
	for _, l := range r.Lost {
		fmt.Fprintln(stdout, "lost:", l)
	}
	fmt.Fprintf(stdout, "salvaged %s: recovered %d blobs, %d actions, %d refs; lost %d blobs, %d actions, %d refs (the next run recomputes lost results). The damaged store is kept as %s: delete it once satisfied.\n",
		dir, r.Blobs, r.Actions, r.Refs, r.LostBlobs, r.LostActions, r.LostRefs, damaged)
	return nil
}
