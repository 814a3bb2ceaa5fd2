//go:build linux

package artifacts

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readOnlyView returns a read-only view of the directory dir: a read-only bind mount
// (root) or dir itself with write permission taken away (anyone else). It skips the test
// when neither is possible.
func readOnlyView(t *testing.T, dir string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Chmod(p, fi.Mode().Perm()&^0o222)
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
				if err == nil {
					os.Chmod(p, fi.Mode().Perm()|0o200)
				}
				return nil
			})
		})
		return dir
	}
	view := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(view, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", dir, view).CombinedOutput(); err != nil {
		t.Skipf("no bind mount for a read-only view: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", view).Run() })
	if out, err := exec.Command("mount", "-o", "remount,ro,bind", view).CombinedOutput(); err != nil {
		t.Skipf("no read-only remount: %v %s", err, out)
	}
	return view
}

// listing describes every file in dir: name, size, modification time.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			fmt.Fprintf(&b, "%s %v %v %d\n", p, fi.Mode(), fi.ModTime(), fi.Size())
		}
		return nil
	})
	return b.String()
}

// Issue 61, item 4 (report 5): a store on a read-only mount, or one this user may not
// write, is readable: OpenReader reads it through a copy in the temporary directory,
// neither writing nor taking its lock, and leaves nothing behind. (It failed with "open
// lock file: read-only file system".)
func TestReadOnlyStoreIsReadable(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	parent := t.TempDir()
	dir := filepath.Join(parent, "store")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := randBytes(7, 300<<10)
	d, err := s.Put(want)
	if err != nil {
		t.Fatal(err)
	}
	key := Digest{1}
	if err := s.PutAction(key, Action{Outputs: map[string]Digest{"model": d}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	view := readOnlyView(t, dir)
	if !ReadOnly(view) {
		t.Fatalf("ReadOnly(%s) is false on a read-only view", view)
	}
	before := listing(t, dir)
	r, err := OpenReader(view, Options{})
	if err != nil {
		t.Fatalf("OpenReader of a read-only store: %v", err)
	}
	got, err := r.Get(d)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("Get from the read-only store: %v (equal %v)", err, bytes.Equal(got, want))
	}
	if _, ok, err := r.GetAction(key); !ok || err != nil {
		t.Errorf("GetAction from the read-only store: %v %v", ok, err)
	}
	if r.Dir() != view {
		t.Errorf("Dir() = %s, want %s", r.Dir(), view)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if after := listing(t, dir); after != before {
		t.Errorf("the read-only store changed:\n%s\nnow\n%s", before, after)
	}
	if left, _ := os.ReadDir(os.TempDir()); len(left) != 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
}
