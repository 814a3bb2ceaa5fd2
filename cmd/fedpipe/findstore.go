package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
)

// How a command finds its store when --store is not given (docs/commands.md, "Which
// store"): an explicit choice first (--store, then $FEDPIPE_STORE, which `run` writes to
// as well), else the first of these that holds a store, the way git finds its repository:
//
//  1. .fedpipe in the working directory;
//  2. .fedpipe in the first manifest's directory, then in each directory above it up to
//     the root of the git repository holding it (only the manifest's own directory when
//     it is in none).
//
// Read-only commands (status, ls, diff, show, report, export, verify, push) never create
// a store: where none is found they exit 2 saying where they looked. `run` writes to the
// store found, and creates .fedpipe in the working directory where there is none.

// storeMarker is the file every store directory holds (Badger's manifest); a directory
// without it (an empty .fedpipe left by an older fedpipe) holds no store.
const storeMarker = "MANIFEST"

// foundStore is the store a command uses and how it was chosen.
type foundStore struct {
	dir string
	how string // "--store", "$FEDPIPE_STORE", "working directory", "manifest's directory"…
}

// noStoreError is a read-only command's answer where no store exists: invalid input
// (exit 2), naming the places looked at and how to point at a store.
type noStoreError struct{ looked []string }

func (e *noStoreError) Error() string {
	return fmt.Sprintf("no fedpipe store found (looked for %s); run `fedpipe run MANIFEST` to create one, "+
		"or point at an existing one with --store DIR or $%s", strings.Join(e.looked, ", "), artifacts.EnvStore)
}

// Is makes a missing store invalid input: errors.Is(err, manifest.ErrInvalid) gives exit 2.
func (e *noStoreError) Is(target error) bool { return target == manifest.ErrInvalid }

// hasStore says whether dir holds a store.
func hasStore(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, storeMarker))
	return err == nil && st.Mode().IsRegular()
}

// storeCandidates returns the directories a command considers, in order, and whether the
// first was chosen explicitly (--store or $FEDPIPE_STORE: then it is the only one).
// manifestArg is the first manifest argument ("" for none); a `#label` suffix is ignored.
func storeCandidates(flag, manifestArg string) ([]foundStore, bool) {
	if flag != "" {
		return []foundStore{{flag, "--store"}}, true
	}
	if env := os.Getenv(artifacts.EnvStore); env != "" {
		return []foundStore{{env, "$" + artifacts.EnvStore}}, true
	}
	var out []foundStore
	seen := map[string]bool{}
	add := func(dir, how string) {
		p := filepath.Join(dir, ".fedpipe")
		if !seen[p] {
			seen[p] = true
			out = append(out, foundStore{p, how})
		}
	}
	if wd, err := os.Getwd(); err == nil {
		add(wd, "working directory")
	}
	if manifestArg == "" {
		return out, false
	}
	if i := strings.IndexByte(manifestArg, '#'); i >= 0 {
		manifestArg = manifestArg[:i]
	}
	dir, err := filepath.Abs(filepath.Dir(manifestArg))
	if err != nil {
		return out, false
	}
	var up []string
	for d := dir; ; {
		up = append(up, d)
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			break // the repository's root
		}
		parent := filepath.Dir(d)
		if parent == d { // in no repository: only the manifest's own directory
			up = up[:1]
			break
		}
		d = parent
	}
	for i, d := range up {
		how := "manifest's directory"
		if i > 0 {
			how = "above the manifest's directory"
		}
		add(d, how)
	}
	return out, false
}

// findStore returns the store a read-only command reads, or a noStoreError (exit 2).
// It names the store on stderr unless --store chose it.
func findStore(flag, manifestArg string, stderr io.Writer) (string, error) {
	cands, explicit := storeCandidates(flag, manifestArg)
	var looked []string
	for _, c := range cands {
		if hasStore(c.dir) {
			if c.how != "--store" {
				fmt.Fprintf(stderr, "fedpipe: reading store %s (%s)\n", c.dir, c.how)
			}
			return c.dir, nil
		}
		looked = append(looked, c.dir)
	}
	if explicit {
		return "", &noStoreError{looked: []string{cands[0].dir + " (" + cands[0].how + ")"}}
	}
	return "", &noStoreError{looked: looked}
}

// runStore returns the store `run` writes to: the one findStore would read, else a new
// one where artifacts.DefaultDir says (--store, $FEDPIPE_STORE, the working directory).
func runStore(flag, manifestArg string) string {
	cands, explicit := storeCandidates(flag, manifestArg)
	if !explicit {
		for _, c := range cands {
			if hasStore(c.dir) {
				return c.dir
			}
		}
	}
	return artifacts.DefaultDir(flag)
}
