package artifacts

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tableStore writes n small blobs (in the table's blocks), six chunked ones (their chunks
// in the value log, their records in the table), an action for each chunked blob and a
// ref, closes the store (which writes one table) and returns the blobs and the table.
func tableStore(t *testing.T, dir string, n int) (blobs []Digest, table string) {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		v := make([]byte, 3000)
		copy(v, fmt.Sprintf("blob %d", i))
		blobs = append(blobs, mustPut(t, s, v))
	}
	for i := range 6 {
		d := mustPut(t, s, randBytes(uint64(500+i), 150<<10+i*777))
		blobs = append(blobs, d)
		if err := s.PutAction(Sum([]byte(fmt.Sprint("action", i))), Action{Outputs: map[string]Digest{"out": d}, Meta: map[string]string{"name": fmt.Sprint("stage ", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutRef("latest", blobs[n]); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) != 1 {
		t.Fatalf("want one table, have %v", tables)
	}
	return blobs, tables[0]
}

// blocksEnd returns where a table's blocks end and its index begins: before the footer's
// checksum (its length in the last 4 bytes) and the index (its length in the 4 before).
func blocksEnd(raw []byte) int {
	cl := int(binary.BigEndian.Uint32(raw[len(raw)-4:]))
	il := int(binary.BigEndian.Uint32(raw[len(raw)-8-cl:]))
	return len(raw) - 8 - cl - il
}

// wantDamaged checks that Open refuses dir with an error wrapping ErrDamaged that names
// the table file. Before tables were checked, a truncated table panicked on one of
// Badger's goroutines (ending the process), and a damaged index failed with Badger's
// "checksum mismatch", not classified as damage.
func wantDamaged(t *testing.T, dir, table string) {
	t.Helper()
	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), filepath.Base(table)) {
		t.Fatalf("Open: want ErrDamaged naming %s, got %v", filepath.Base(table), err)
	}
	t.Logf("Open: %v", err)
}

// salvageAll salvages dir and checks that every blob of want came back, verified, with
// every action and the ref, into a store that fscks clean.
func salvageAll(t *testing.T, dir string, blobs []Digest, want map[Digest]bool) SalvageReport {
	t.Helper()
	dst := dir + ".salvaged"
	r, err := Salvage(dir, dst, nil)
	if err != nil {
		t.Fatalf("salvage: %v", err)
	}
	t.Logf("salvage: %d blobs, %d lost; fixes %q", r.Blobs, r.LostBlobs, r.Fixes)
	s, err := Open(dst, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fr, err := s.Fsck()
	if err != nil || !fr.OK() || fr.Blobs != r.Blobs {
		t.Errorf("the salvaged store: %+v, %v", fr, err)
	}
	got := 0
	for _, d := range blobs {
		b, err := s.Get(d)
		if err == nil {
			got++
		}
		if want[d] && (err != nil || Sum(b) != d) {
			t.Errorf("intact blob %s not salvaged: %v", d.Short(), err)
		}
	}
	if got != r.Blobs || r.Blobs+r.LostBlobs > len(blobs) {
		t.Errorf("report says %d blobs (%d lost), the store has %d of %d", r.Blobs, r.LostBlobs, got, len(blobs))
	}
	return r
}

// A truncated table (issue 61: 70,278 bytes cut to 69,000) is damage, not a panic; salvage
// brings back every blob whose bytes are intact: with only the index cut, all of them;
// with the table cut in its blocks, every blob whose record lies in a block before the cut.
func TestTruncatedTableIsDamageAndSalvaged(t *testing.T) {
	const n = 300
	clean := filepath.Join(t.TempDir(), "clean")
	blobs, table := tableStore(t, clean, n)
	raw, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	end := blocksEnd(raw)
	for _, cut := range []int{len(raw) - 1278, end / 2} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			if err := os.CopyFS(dir, os.DirFS(clean)); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(filepath.Join(dir, filepath.Base(table)), int64(cut)); err != nil {
				t.Fatal(err)
			}
			wantDamaged(t, dir, table)
			// Intact: a blob whose record (its key) and inline bytes end well before the
			// cut (a block is at most a few KiB), or every blob when the cut spares the
			// blocks. The chunked blobs' records are near the table's start (b/ sorts
			// before c/), their chunks in the value log.
			want := map[Digest]bool{}
			for _, d := range blobs {
				at := strings.LastIndex(string(raw), string(blobKey(d)))
				if cut >= end || (at >= 0 && at+16<<10 < cut) {
					want[d] = true
				}
			}
			r := salvageAll(t, dir, blobs, want)
			if r.Blobs < len(want) || (cut >= end && r.Blobs != len(blobs)) {
				t.Errorf("salvaged %d blobs, want at least %d of %d", r.Blobs, len(want), len(blobs))
			}
			if cut >= end && (r.Actions != 6 || r.Refs != 1) {
				t.Errorf("salvage: %+v", r)
			}
		})
	}
}

// One flipped byte in a table's index or footer (issue 61: 100 or 500 bytes before the
// end) is damage naming the table, and salvage brings back every blob, action and ref:
// the blocks are intact.
func TestFlippedIndexByteIsDamageAndSalvaged(t *testing.T) {
	const n = 300
	clean := filepath.Join(t.TempDir(), "clean")
	blobs, table := tableStore(t, clean, n)
	raw, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	all := map[Digest]bool{}
	for _, d := range blobs {
		all[d] = true
	}
	for _, back := range []int{100, 500, 2, 6} {
		t.Run(fmt.Sprint(back), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			if err := os.CopyFS(dir, os.DirFS(clean)); err != nil {
				t.Fatal(err)
			}
			flipped := append([]byte(nil), raw...)
			flipped[len(raw)-back] ^= 0x10
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(table)), flipped, 0o644); err != nil {
				t.Fatal(err)
			}
			wantDamaged(t, dir, table)
			r := salvageAll(t, dir, blobs, all)
			if r.Blobs != len(blobs) || r.Actions != 6 || r.Refs != 1 || r.LostBlobs != 0 {
				t.Errorf("salvage: %+v", r)
			}
		})
	}
}

// A table the manifest lists but that is gone is damage naming it; salvage recovers what
// the rest of the store holds and names the dropped table.
func TestMissingTableIsDamage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	_, table := tableStore(t, dir, 50)
	if err := os.Remove(table); err != nil {
		t.Fatal(err)
	}
	wantDamaged(t, dir, table)
	r, err := Salvage(dir, dir+".salvaged", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(r.Fixes, "\n"), filepath.Base(table)) {
		t.Errorf("salvage does not name the missing table: %+v", r)
	}
	s, err := Open(dir+".salvaged", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if fr, err := s.Fsck(); err != nil || !fr.OK() {
		t.Errorf("the salvaged store: %+v, %v", fr, err)
	}
}

// Forty random byte flips in a table (issue 61: 6 of 6 such stores could not be
// salvaged) never panic: the store either opens or is refused as damage, fsck reports
// damage rather than crashing, and salvage always ends in a store that fscks clean, with
// every blob the flips did not touch.
func TestRandomTableFlipsAreSalvaged(t *testing.T) {
	clean := filepath.Join(t.TempDir(), "clean")
	blobs, table := tableStore(t, clean, 300)
	raw, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	blocks := tableBlocks(t, raw)
	for seed := range 6 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			if err := os.CopyFS(dir, os.DirFS(clean)); err != nil {
				t.Fatal(err)
			}
			flipped := append([]byte(nil), raw...)
			rnd := randBytes(uint64(1000+seed), 40*9)
			for i := range 40 {
				off := int(binary.LittleEndian.Uint64(rnd[9*i:]) % uint64(len(flipped)))
				flipped[off] ^= rnd[9*i+8] | 1
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(table)), flipped, 0o644); err != nil {
				t.Fatal(err)
			}
			if s, err := Open(dir, Options{}); err == nil {
				_, ferr := s.Fsck()
				s.Close()
				t.Logf("opened; fsck: %v", ferr)
			} else if !errors.Is(err, ErrDamaged) {
				t.Errorf("Open: %v, want ErrDamaged", err)
			}
			// A flip damages one block, which holds one small blob (3,000 bytes of a 4 KiB
			// block) or a few records: every blob outside the damaged blocks comes back.
			want := map[Digest]bool{}
			for _, d := range blobs {
				at := strings.Index(string(raw), string(d[4:])) // after the key's overlap
				want[d] = true
				for _, b := range blocks {
					if at >= b.start && at < b.end && flippedIn(raw, flipped, b) {
						delete(want, d)
					}
				}
			}
			// With the index damaged too, blocks are found by their trailers, and a damaged
			// trailer can hide the next block's start.
			strict := want
			if _, ok := indexedBlocks(flipped); !ok {
				strict = nil
			}
			r := salvageAll(t, dir, blobs, strict)
			if (strict != nil && r.Blobs < len(want)) || r.Blobs < len(blobs)-45 {
				t.Errorf("salvage recovered %d of %d blobs after 40 flips, %d outside the damaged blocks: %+v", r.Blobs, len(blobs), len(want), r)
			}
		})
	}
}

// flippedIn reports whether flipped differs from raw within block b.
func flippedIn(raw, flipped []byte, b tableBlock) bool {
	return string(raw[b.start:b.end]) != string(flipped[b.start:b.end])
}
