package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

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

// storePathError is a store path that cannot be a store: a regular file or another
// non-directory (invalid input, exit 2), a symbolic-link loop or a directory this user may
// not read (the environment, exit 4). It names the path and how it was chosen.
type storePathError struct {
	dir, how string
	invalid  bool
	err      error
}

func (e *storePathError) Error() string {
	if e.invalid {
		return fmt.Sprintf("store %s (%s): %v", e.dir, e.how, e.err)
	}
	return fmt.Sprintf("store %s (%s) cannot be read: %v", e.dir, e.how, e.err)
}

func (e *storePathError) Unwrap() error { return e.err }

// Is makes a store path that is not a directory invalid input (exit 2); the others unwrap
// to their system error (exit 4).
func (e *storePathError) Is(target error) bool { return e.invalid && target == manifest.ErrInvalid }

// checkStorePath refuses a store path that names something other than a directory, loops
// through symbolic links, or cannot be read; a path that does not exist yet is fine.
func checkStorePath(dir, how string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return &storePathError{dir: dir, how: how, err: errors.New("a loop of symbolic links")}
	case errors.Is(err, syscall.ENOTDIR):
		return &storePathError{dir: dir, how: how, invalid: true, err: errors.New("a part of the path is a file, not a directory")}
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return &storePathError{dir: dir, how: how, err: err}
	case !st.IsDir():
		return &storePathError{dir: dir, how: how, invalid: true, err: fmt.Errorf("is a %s, not a store directory", fileKind(st.Mode()))}
	}
	if _, err := os.Stat(filepath.Join(dir, storeMarker)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &storePathError{dir: dir, how: how, err: err}
	}
	if f, err := os.Open(dir); err != nil {
		return &storePathError{dir: dir, how: how, err: err}
	} else {
		_, err = f.Readdirnames(1)
		f.Close()
		if err != nil && err != io.EOF {
			return &storePathError{dir: dir, how: how, err: err}
		}
	}
	return nil
}

// fileKind names what a non-directory path is.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

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
		if err := checkStorePath(c.dir, c.how); err != nil {
			return "", err
		}
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

// storeHow says how a command that writes chose its store directory, for messages.
func storeHow(flag string) string {
	switch {
	case flag != "":
		return "--store"
	case os.Getenv(artifacts.EnvStore) != "":
		return "$" + artifacts.EnvStore
	}
	return "found from the working directory"
}
