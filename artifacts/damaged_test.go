package artifacts

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A bit flipped anywhere in a table's blocks makes no read panic: the open that checks
// every block's checksum fails with ErrDamaged (fsck and gc say so, pointing to salvage),
// and Salvage reads every other block, recovering every entry it can still read into a store that
// fscks clean, and naming the stretch it could not. Without the recovery, Badger panics
// ("slice bounds out of range") on some of these offsets.
func TestFlippedTableBitIsDamageNotAPanic(t *testing.T) {
	clean := filepath.Join(t.TempDir(), "clean")
	s, err := Open(clean, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	var digests []Digest
	for i := range n {
		v := make([]byte, 3000) // under the value threshold: in the table's blocks
		copy(v, fmt.Sprintf("blob %d", i))
		d, err := s.Put(v)
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	tables, _ := filepath.Glob(filepath.Join(clean, "*.sst"))
	if len(tables) != 1 {
		t.Fatalf("want one table, have %v", tables)
	}
	table, err := os.ReadFile(tables[0])
	if err != nil {
		t.Fatal(err)
	}
	// The bytes to flip: the header of a blob's entry, just before its key in the table
	// (two little-endian uint16s: the key's overlap with the block's base key, and the
	// length of the rest), which Badger decodes without checking.
	var offsets []int
	for _, d := range digests[:20] {
		if at := bytes.Index(table, d[:]); at > 8 {
			offsets = append(offsets, at-5, at-6, at-7, at-8)
		}
	}
	damaged, salvaged := 0, 0
	for _, off := range offsets {
		if salvaged == 2 {
			break
		}
		dir := filepath.Join(t.TempDir(), "store")
		if err := os.CopyFS(dir, os.DirFS(clean)); err != nil {
			t.Fatal(err)
		}
		flipped := append([]byte(nil), table...)
		flipped[off] ^= 0x04
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(tables[0])), flipped, 0o644); err != nil {
			t.Fatal(err)
		}
		// Every block's checksum is checked at open: the damaged block is refused there,
		// before any read or compaction meets it.
		s, err := Open(dir, Options{})
		if err == nil {
			_, err = s.Fsck()
			s.Close()
		}
		if !errors.Is(err, ErrDamaged) {
			t.Errorf("offset %d: want ErrDamaged, got %v", off, err)
			continue
		}
		damaged++
		t.Logf("offset %d: %v", off, err)
		rep, err := Salvage(dir, dir+".salvaged", nil)
		if err != nil {
			t.Fatalf("offset %d: salvage: %v", off, err)
		}
		if rep.Blobs < n/2 || len(rep.Lost) == 0 {
			t.Errorf("offset %d: salvage recovered %d of %d blobs, lost %q; want most back and the rest named", off, rep.Blobs, n, rep.Lost)
		}
		out, err := Open(dir+".salvaged", Options{})
		if err != nil {
			t.Fatal(err)
		}
		fr, err := out.Fsck()
		out.Close()
		if err != nil || fr.CorruptBlobs != 0 || fr.Blobs != rep.Blobs {
			t.Errorf("offset %d: the salvaged store: %+v, %v", off, fr, err)
		}
		salvaged++
	}
	if damaged == 0 {
		t.Fatal("no offset made a table undecodable: the test exercised nothing")
	}
}
