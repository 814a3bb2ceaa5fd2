// Package storedir finds the store a command uses: --store, $FEDPIPE_STORE, else the first
// .fedpipe that holds one from the working directory or the manifest's directory up to its
// repository's root (Find, ForRun), and refuses a path that cannot be a store (CheckPath).
package storedir

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
	"github.com/fedpipe/fedpipe/artifacts/osfile"
	"github.com/fedpipe/fedpipe/errs"
)

// How a command finds its store when --store is not given ("Which store" in the
// repository's docs/commands.md): an explicit choice first (--store, then $FEDPIPE_STORE, which `run` writes to
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

// Marker is the file every store directory holds (Badger's manifest); a directory
// without it (an empty .fedpipe left by an older fedpipe) holds no store.
const Marker = "MANIFEST"

// Candidate is the store a command uses and how it was chosen.
type Candidate struct {
	Dir string
	How string // "--store", "$FEDPIPE_STORE", "working directory", "manifest's directory"…
}

// NoStoreError is a read-only command's answer where no store exists: invalid input
// (exit 2), naming the places looked at and how to point at a store.
type NoStoreError struct{ Looked []string }

func (e *NoStoreError) Error() string {
	return fmt.Sprintf("no fedpipe store found (looked for %s); run `fedpipe run MANIFEST` to create one, "+
		"or point at an existing one with --store DIR or $%s", strings.Join(e.Looked, ", "), artifacts.EnvStore)
}

// Is makes a missing store invalid input: errors.Is(err, errs.ErrInvalid) gives exit 2.
func (e *NoStoreError) Is(target error) bool { return target == errs.ErrInvalid }

// PathError is a store path that cannot be a store: a regular file or another
// non-directory (invalid input, exit 2), a symbolic-link loop or a directory this user may
// not read (the environment, exit 4). It names the path and how it was chosen.
type PathError struct {
	Dir, How string
	Invalid  bool // not a directory: invalid input
	Err      error
}

func (e *PathError) Error() string {
	if e.Invalid {
		return fmt.Sprintf("store %s (%s): %v", e.Dir, e.How, e.Err)
	}
	return fmt.Sprintf("store %s (%s) cannot be read: %v", e.Dir, e.How, e.Err)
}

func (e *PathError) Unwrap() error { return e.Err }

// Is makes a store path that is not a directory invalid input (exit 2); the others unwrap
// to their system error (exit 4).
func (e *PathError) Is(target error) bool { return e.Invalid && target == errs.ErrInvalid }

// CheckPath refuses a store path that names something other than a directory, loops
// through symbolic links, or cannot be read; a path that does not exist yet is fine.
func CheckPath(dir, how string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return &PathError{Dir: dir, How: how, Err: errors.New("a loop of symbolic links")}
	case errors.Is(err, syscall.ENOTDIR):
		return &PathError{Dir: dir, How: how, Invalid: true, Err: errors.New("a part of the path is a file, not a directory")}
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return &PathError{Dir: dir, How: how, Err: err}
	case !st.IsDir():
		return &PathError{Dir: dir, How: how, Invalid: true, Err: fmt.Errorf("is %s, not a store directory", osfile.Kind(st.Mode()))}
	}
	if mst, err := os.Stat(filepath.Join(dir, Marker)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &PathError{Dir: dir, How: how, Err: err}
	} else if err == nil && !mst.Mode().IsRegular() {
		// A store whose manifest is a named pipe or a directory is damaged, not absent.
		return &PathError{Dir: dir, How: how, Err: fmt.Errorf("%w: its %s is %s, not Badger's manifest file", artifacts.ErrDamaged, Marker, osfile.Kind(mst.Mode()))}
	}
	if f, err := os.Open(dir); err != nil {
		return &PathError{Dir: dir, How: how, Err: err}
	} else {
		_, err = f.Readdirnames(1)
		f.Close()
		if err != nil && err != io.EOF {
			return &PathError{Dir: dir, How: how, Err: err}
		}
	}
	return nil
}

// Has says whether dir holds a store.
func Has(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, Marker))
	return err == nil && st.Mode().IsRegular()
}

// Candidates returns the directories a command considers, in order, and whether the
// first was chosen explicitly (--store or $FEDPIPE_STORE: then it is the only one).
// manifestArg is the first manifest argument ("" for none); a `#label` suffix is ignored.
func Candidates(flag, manifestArg string) ([]Candidate, bool) {
	if c, ok := Explicit(flag); ok {
		return []Candidate{c}, true
	}
	var out []Candidate
	seen := map[string]bool{}
	add := func(dir, how string) {
		p := filepath.Join(dir, ".fedpipe")
		if !seen[p] {
			seen[p] = true
			out = append(out, Candidate{p, how})
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

// Find returns the store a read-only command reads, and how it was chosen, or a
// NoStoreError (invalid input).
func Find(flag, manifestArg string) (Candidate, error) {
	cands, explicit := Candidates(flag, manifestArg)
	var looked []string
	for _, c := range cands {
		if err := CheckPath(c.Dir, c.How); err != nil {
			return Candidate{}, err
		}
		if Has(c.Dir) {
			return c, nil
		}
		looked = append(looked, c.Dir)
	}
	if explicit {
		return Candidate{}, &NoStoreError{Looked: []string{cands[0].Dir + " (" + cands[0].How + ")"}}
	}
	return Candidate{}, &NoStoreError{Looked: looked}
}

// ForRun returns the store `run` writes to: the one Find would read, else a new
// one where Default says (--store, $FEDPIPE_STORE, the working directory).
func ForRun(flag, manifestArg string) string {
	cands, explicit := Candidates(flag, manifestArg)
	if !explicit {
		for _, c := range cands {
			if Has(c.Dir) {
				return c.Dir
			}
		}
	}
	return Default(flag)
}

// Explicit returns the store directory chosen explicitly, and how: --store if flag is
// non-empty, else $FEDPIPE_STORE if set and non-empty. It is the one place that order is
// written; Candidates, Default and How all start from it.
func Explicit(flag string) (Candidate, bool) {
	if flag != "" {
		return Candidate{flag, "--store"}, true
	}
	if env := os.Getenv(artifacts.EnvStore); env != "" {
		return Candidate{env, "$" + artifacts.EnvStore}, true
	}
	return Candidate{}, false
}

// Default returns the store directory a command that writes uses when no store is found:
// the explicit choice (Explicit), else ".fedpipe" in the working directory (an absolute
// path when the working directory is known).
func Default(flag string) string {
	if c, ok := Explicit(flag); ok {
		return c.Dir
	}
	if wd, err := os.Getwd(); err == nil {
		return filepath.Join(wd, ".fedpipe")
	}
	return ".fedpipe"
}

// How says how a command that writes chose its store directory, for messages.
func How(flag string) string {
	if c, ok := Explicit(flag); ok {
		return c.How
	}
	return "found from the working directory"
}
