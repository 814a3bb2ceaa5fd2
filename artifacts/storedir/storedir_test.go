package storedir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/errs"
)

func TestNoStoreErrorIsInvalidInput(t *testing.T) {
	err := error(&NoStoreError{Looked: []string{"/a/.fedpipe"}})
	if !errors.Is(err, errs.ErrInvalid) || !strings.Contains(err.Error(), "/a/.fedpipe") {
		t.Errorf("%v: want invalid input naming /a/.fedpipe", err)
	}
}

// A store is found from the manifest's directory up to the repository's root, the nearest
// first; without one, run writes to the working directory's.
func TestFindLooksUpToTheRepositoryRoot(t *testing.T) {
	t.Setenv(artifacts.EnvStore, "")
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b")
	for _, d := range []string{filepath.Join(root, ".git"), deep} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	wd := t.TempDir()
	t.Chdir(wd)
	manifestArg := filepath.Join(deep, "m.yaml#fedavg")
	if _, err := Find("", manifestArg); !errors.Is(err, errs.ErrInvalid) {
		t.Fatalf("no store anywhere: %v, want invalid input", err)
	}
	if got, want := ForRun("", manifestArg), Default(""); got != want {
		t.Errorf("ForRun without a store = %s, want %s", got, want)
	}
	store := filepath.Join(root, ".fedpipe")
	if err := os.MkdirAll(store, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, Marker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Find("", manifestArg)
	if err != nil || c.Dir != store || c.How != "above the manifest's directory" {
		t.Errorf("Find = %+v, %v; want %s above the manifest's directory", c, err, store)
	}
	if got := ForRun("", manifestArg); got != store {
		t.Errorf("ForRun = %s, want the store found, %s", got, store)
	}
	if c, err := Find("/nowhere/st", manifestArg); err == nil || !strings.Contains(err.Error(), "/nowhere/st (--store)") {
		t.Errorf("--store without a store: %+v, %v", c, err)
	}
}

func TestCheckPathRefusesAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := CheckPath(f, "--store")
	var pe *PathError
	if !errors.As(err, &pe) || !pe.Invalid || !errors.Is(err, errs.ErrInvalid) || !strings.Contains(err.Error(), "regular file") {
		t.Errorf("CheckPath(file) = %v, want invalid input naming a regular file", err)
	}
	if err := CheckPath(filepath.Join(t.TempDir(), "new"), "--store"); err != nil {
		t.Errorf("a path that does not exist yet: %v", err)
	}
}

// --store wins over $FEDPIPE_STORE, which wins over the working directory, and How names
// the choice the same way Candidates does.
func TestExplicitOrder(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	t.Setenv(artifacts.EnvStore, "")
	if _, ok := Explicit(""); ok {
		t.Error("Explicit chose a store with neither --store nor $FEDPIPE_STORE")
	}
	if got, want := Default(""), filepath.Join(wd, ".fedpipe"); got != want {
		t.Errorf("Default(\"\") = %q, want %q", got, want)
	}
	if got := How(""); got != "found from the working directory" {
		t.Errorf("How(\"\") = %q", got)
	}
	t.Setenv(artifacts.EnvStore, "/env/store")
	if c, ok := Explicit(""); !ok || c != (Candidate{"/env/store", "$FEDPIPE_STORE"}) {
		t.Errorf("Explicit with $FEDPIPE_STORE = %v, %v", c, ok)
	}
	if got := Default(""); got != "/env/store" {
		t.Errorf("Default with $FEDPIPE_STORE = %q", got)
	}
	if c, ok := Explicit("/flag"); !ok || c != (Candidate{"/flag", "--store"}) || Default("/flag") != "/flag" || How("/flag") != "--store" {
		t.Errorf("--store does not win: %v, %v, %q, %q", c, ok, Default("/flag"), How("/flag"))
	}
	if cands, explicit := Candidates("", ""); !explicit || len(cands) != 1 || cands[0].How != "$FEDPIPE_STORE" {
		t.Errorf("Candidates with $FEDPIPE_STORE = %v, %v", cands, explicit)
	}
}
