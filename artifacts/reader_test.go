package artifacts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A snapshot reader must never write the holder's files. Badger deletes a table after a
// compaction by truncating it to zero length first, so a snapshot that hard-linked the
// holder's tables and then compacted (a flush on Close is enough once level 0 is full)
// emptied them under the running holder, which died of SIGBUS on its next lookup and left
// a store no one could open (seen on a paper-scale cell's store after a `push` beside it).
func TestSnapshotNeverWritesTheHoldersFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	var digests []Digest
	put := func(s *Store, i int) {
		v := make([]byte, 3000) // under the value threshold: in the LSM tree's tables
		copy(v, fmt.Sprintf("blob %d ", i))
		d, err := s.Put(v)
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
	}
	// Several level-0 tables: each close flushes the memtable into one.
	for round := range 6 {
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2000 {
			put(s, round*10000+i)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	holder, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	sizes := func() map[string]int64 {
		m := map[string]int64{}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
				m[e.Name()] = fi.Size()
			}
		}
		return m
	}
	before := sizes()
	// Readers come and go beside the holder, one of them writing (as a reader may).
	for i := range 2 {
		r, err := OpenReader(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.snapshot == "" {
			t.Fatal("OpenReader did not read a snapshot of a held store")
		}
		// A snapshot's Badger is read-only: it writes, flushes and compacts nothing (an
		// older snapshot, writable, once compacted into the holder's tables).
		if _, err := r.Put([]byte(fmt.Sprintf("reader %d", i))); !errors.Is(err, ErrReadOnly) {
			t.Fatalf("a write to a reader's snapshot: %v, want ErrReadOnly", err)
		}
		for _, d := range digests[:50] {
			if _, err := r.Get(d); err != nil {
				t.Fatalf("the reader: %v", err)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	after := sizes()
	for name, size := range before {
		if filepath.Ext(name) != ".sst" && filepath.Ext(name) != ".vlog" {
			continue
		}
		if got, ok := after[name]; ok && got < size {
			t.Errorf("the holder's %s shrank from %d to %d bytes while readers read snapshots", name, size, got)
		}
	}
	for _, d := range digests {
		if _, err := holder.Get(d); err != nil {
			t.Fatalf("the holder lost %s: %v", d, err)
		}
	}
}
