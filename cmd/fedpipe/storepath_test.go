//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 61, minor cases: a --store naming a regular file (or a path through one), a
// --store that loops through symbolic links, and a dataset.path naming a file each give
// the exit code of docs/commands.md — 2 for the input, 4 for the environment — and a
// message naming the path and where it came from; none creates a store. (They exited 1
// with "not a directory", 2 with "no fedpipe store found", and 1 with no location.)
func TestStorePathAndDatasetPathErrors(t *testing.T) {
	dir := t.TempDir()
	m := writeManifest(t, dir, tinyManifest)
	file := filepath.Join(dir, "afile")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	loop := filepath.Join(dir, "loop1")
	os.Symlink(filepath.Join(dir, "loop2"), loop)
	os.Symlink(loop, filepath.Join(dir, "loop2"))
	data := filepath.Join(dir, "d.yaml")
	body := strings.Replace(tinyManifest, "dataset: {name: synthetic, alpha: 0.5, beta: 0.5, devices: 6}", "dataset: {name: mnist, path: "+file+"}", 1)
	body = strings.Replace(body, "partition: {scheme: natural}", "partition: {scheme: iid}", 1)
	if err := os.WriteFile(data, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"run", m, "--store", file}, 2, []string{file, "--store", "regular file, not a store directory"}},
		{[]string{"status", m, "--store", file}, 2, []string{file, "--store", "regular file"}},
		{[]string{"ls", m, "--store", file}, 2, []string{file, "regular file"}},
		{[]string{"fsck", "--store", file}, 2, []string{file, "regular file"}},
		{[]string{"report", m, "-o", filepath.Join(dir, "out"), "--store", filepath.Join(file, "sub")}, 2, []string{"a part of the path is a file"}},
		{[]string{"run", m, "--store", loop}, 4, []string{loop, "--store", "loop of symbolic links"}},
		{[]string{"status", m, "--store", loop}, 4, []string{loop, "loop of symbolic links"}},
		{[]string{"run", data, "--store", filepath.Join(dir, "s")}, 2, []string{data + ":", "dataset.path", file, "not a directory"}},
	} {
		code, _, errs := fedpipe(t, c.args...)
		if code != c.code {
			t.Errorf("fedpipe %s: exit %d, want %d\n%s", strings.Join(c.args, " "), code, c.code, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("fedpipe %s: message does not say %q:\n%s", strings.Join(c.args, " "), w, errs)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "s")); err == nil {
		t.Error("a store was created for a manifest whose dataset.path is a file")
	}
}
