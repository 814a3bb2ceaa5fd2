//go:build linux

package artifacts

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// copiedBytes is what the regular files under dir hold (symbolic links not followed): what
// a snapshot copied.
func copiedBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// A reader beside a running holder, and a reader of a read-only store, copy the tables and
// what the memtable logs hold, not the value logs (issue 69: `status` copied all 576 MB of
// a 576 MB store, and 130 MB per reader during a run, the holder's preallocated value log
// copied dense): the value logs are linked by name and read by a read-only Badger. Every
// blob still reads back, verified.
func TestReadersCopyNoValueLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds := putRandomBlobs(t, s, 3, 1<<20) // 72 MiB of chunks, in the value logs
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var logs int64
	vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	for _, p := range vlogs {
		if fi, err := os.Stat(p); err == nil {
			logs += fi.Size()
		}
	}
	check := func(what string, r *Store) {
		t.Helper()
		if r.snapshot == "" {
			t.Fatalf("%s: no snapshot", what)
		}
		copied := copiedBytes(t, r.snapshot)
		t.Logf("%s: copied %d bytes of a store whose value logs hold %d", what, copied, logs)
		if copied > logs/20 {
			t.Errorf("%s: copied %d bytes, over a twentieth of the value logs' %d", what, copied, logs)
		}
		for _, d := range ds {
			if b, err := r.Get(d); err != nil || Sum(b) != d {
				t.Fatalf("%s: %v", what, err)
			}
		}
	}
	holder, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	more := putRandomBlobs(t, holder, 1, 2<<20) // in the holder's memtable and newest log
	r, err := OpenReader(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	check("beside a holder", r)
	for _, d := range more {
		if _, err := r.Get(d); err != nil {
			t.Errorf("a blob the holder wrote before the reader came: %v", err)
		}
	}
	r.Close()
	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	ds = append(ds, more...)
	view := readOnlyView(t, dir)
	r, err = OpenReader(view, Options{})
	if err != nil {
		t.Fatal(err)
	}
	check("read-only", r)
	r.Close()
}
