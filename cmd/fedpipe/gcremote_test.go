package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ageFiles sets back the modification time of every file under dir by two hours, as if
// the remote's objects had been written then.
func ageFiles(t *testing.T, dir string) {
	t.Helper()
	old := time.Now().Add(-2 * time.Hour)
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(path, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// countFiles is the number of files under dir.
func countFiles(t *testing.T, dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// gc --remote keeps what the named manifest uses — results-only (partial) entries
// included, whole enough for a fresh store to run nothing — and drops the results of a
// variant nobody names. A dry run lists them with sizes and deletes nothing. In a
// kept-results directory the results its cells/ index names stay even when their
// manifest is not given, and the index itself is never touched.
func TestGCRemoteKeepsTheManifestsResults(t *testing.T) {
	onEachRemote(t, testGCRemoteKeepsTheManifestsResults)
}

func testGCRemoteKeepsTheManifestsResults(h *remoteHarness) {
	t := h.t
	os.Mkdir(filepath.Join(h.dir, "a"), 0o755)
	os.Mkdir(filepath.Join(h.dir, "b"), 0o755)
	m := writeManifest(t, filepath.Join(h.dir, "a"), tinyManifest)
	v := writeManifest(t, filepath.Join(h.dir, "b"), strings.Replace(strings.Replace(tinyManifest,
		"name: tiny", "name: tiny-lr", 1), "lr: 0.05", "lr: 0.02", 1))
	url := h.remoteURL("gc")
	ok := func(p *proc) string {
		t.Helper()
		if code := p.wait(); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", p.cmd.Args[1:], code, p.out.String(), p.err.String())
		}
		return p.out.String()
	}
	ref := h.start("run", m, "--store", h.store("src"), "--json").json()
	ok(h.start("push", m, "--store", h.store("src"), "--remote", url, "--results-only"))
	// The variant's results reach the remote from a worker's run: no kept-results index.
	variant := h.start("run", v, "--store", h.store("variant"), "--remote", url, "--json").json()
	dropped := count(variant, "", "ran") - count(variant, "partition", "ran")
	if dropped == 0 {
		t.Fatal("the variant computed nothing of its own")
	}
	root := h.objectPath("gc")
	ageFiles(t, root)
	files := countFiles(t, root)

	if code := h.start("gc", "--remote", url).wait(); code != exitInvalid {
		t.Errorf("gc --remote with nothing to keep: exit %d, want %d", code, exitInvalid)
	}
	dry := ok(h.start("gc", m, "--remote", url, "--dry-run"))
	if n := strings.Count(dry, "would remove  result"); n != dropped {
		t.Errorf("the dry run lists %d results, want the variant's %d:\n%s", n, dropped, dry)
	}
	if !strings.Contains(dry, " KiB") && !strings.Contains(dry, " B ") || !strings.Contains(dry, "in total) from "+url) {
		t.Errorf("the dry run gives no sizes or total:\n%s", dry)
	}
	if n := countFiles(t, root); n != files {
		t.Fatalf("the dry run changed the remote: %d files, was %d", n, files)
	}
	out := ok(h.start("gc", m, "--remote", url))
	if !strings.Contains(out, "removed "+strconv.Itoa(dropped)+" results") {
		t.Errorf("gc --remote: want %d results removed:\n%s", dropped, out)
	}
	if n := countFiles(t, root); n >= files {
		t.Errorf("gc removed no file (%d, was %d)", n, files)
	}

	// What the manifest uses is whole: a fresh store runs nothing.
	again := h.start("run", m, "--store", h.store("fresh"), "--remote", url, "--json").json()
	want := map[string]stageJSON{}
	for _, s := range ref.Stages {
		want[s.Name] = s
	}
	for _, s := range again.Stages {
		for name, d := range s.Outputs { // results only: the models were left out
			if want[s.Name].Outputs[name] != d {
				t.Errorf("after gc: %s output %s = %.12s, want %.12s", s.Name, name, d, want[s.Name].Outputs[name])
			}
		}
	}
	if n := count(again, "", "ran"); n != 0 {
		t.Errorf("after gc a fresh store ran %d stages of the kept manifest, want 0", n)
	}
	// The variant's own results are gone: a fresh store recomputes them.
	redo := h.start("run", v, "--store", h.store("fresh-v"), "--remote", url, "--json").json()
	if n := count(redo, "", "ran") - count(redo, "partition", "ran"); n != dropped {
		t.Errorf("after gc the variant ran %d stages, want its %d dropped ones", n, dropped)
	}

	if h.srv == nil {
		// A kept-results directory: its index keeps the first manifest's results when
		// only the variant is given, and survives.
		index, _ := filepath.Glob(filepath.Join(root, "cells", "*", "*.json"))
		if len(index) == 0 {
			t.Fatal("push wrote no kept-results index")
		}
		ageFiles(t, root)
		out := ok(h.start("gc", v, "--remote", url, "--grace", "0s"))
		if !strings.Contains(out, "removed 0 results") {
			t.Errorf("gc given only the variant removed indexed results:\n%s", out)
		}
		after, _ := filepath.Glob(filepath.Join(root, "cells", "*", "*.json"))
		if len(after) != len(index) {
			t.Errorf("gc touched the kept-results index: %d files, was %d", len(after), len(index))
		}
		again := h.start("run", m, "--store", h.store("fresh-2"), "--remote", url, "--json").json()
		if n := count(again, "", "ran"); n != 0 {
			t.Errorf("after gc of the variant only, a fresh store ran %d stages of the indexed manifest", n)
		}
	}
	h.checkNoCredentials()
}

// gc's flags are checked before anything is deleted: a bad combination or address exits
// 2; a remote that cannot be reached exits 1, naming it.
func TestGCRemoteErrors(t *testing.T) {
	dir := t.TempDir()
	m := writeManifest(t, dir, tinyManifest)
	for _, args := range [][]string{
		{"gc", m, "--grace", "1m"},
		{"gc", m, "--remote", filepath.Join(dir, "r"), "--store", filepath.Join(dir, "s")},
		{"gc", m, "--remote", "gs://bkt-1/p"},
		{"gc", m, "--remote", "file://host/dir"},
		{"gc", "--remote", filepath.Join(dir, "r"), "--dry-run"},
		{"gc", m, "--remote", filepath.Join(dir, "r"), "--grace", "-1h"},
	} {
		if code, _, errOut := fedpipe(t, args...); code != exitInvalid || errOut == "" {
			t.Errorf("%q: exit %d (%q), want %d with a message", args[1:], code, errOut, exitInvalid)
		}
	}
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "y")
	code, _, errOut := fedpipe(t, "gc", m, "--remote", "s3://bkt-1/gone")
	if code != exitFailure || !strings.Contains(errOut, "s3://bkt-1/gone") {
		t.Errorf("gc on an unreachable remote: exit %d, %q; want %d naming it", code, errOut, exitFailure)
	}
}
