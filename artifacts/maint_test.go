package artifacts

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// vlogBytes is the size on disk of dir's value-log files.
func vlogBytes(t *testing.T, dir string) int64 {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			total += fi.Size()
		}
	}
	return total
}

// randomBlob is n bytes no chunk of which repeats another's.
func randomBlob(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 3))
	for j := 0; j+8 <= len(b); j += 8 {
		binary.LittleEndian.PutUint64(b[j:], r.Uint64())
	}
	return b
}

// GC gives the disk space of what it removes back: removing 5 of 6 24 MB blobs must
// shrink the value log, not only the store's accounting, and the kept blob still reads
// back intact.
func TestGCReclaimsDiskSpace(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	var ds []Digest
	for i := 0; i < 6; i++ {
		d, err := s.Put(randomBlob(24<<20, uint64(i)))
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before := vlogBytes(t, dir)
	if s, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	r, err := s.GC(nil, map[Digest]bool{ds[0]: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Blobs != 5 {
		t.Fatalf("GC removed %d blobs, want 5", r.Blobs)
	}
	if r.DiskAfter >= r.DiskBefore-100<<20 {
		t.Errorf("GC reports the directory at %d MB before and %d MB after: it should have shrunk by the 120 MB removed", r.DiskBefore>>20, r.DiskAfter>>20)
	}
	// Closing truncates the value log being written to what it holds, so both sizes
	// count bytes written, not the file Badger maps ahead of its writes.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	after := vlogBytes(t, dir)
	if after > before/4 {
		t.Errorf("value log %d MB before GC, %d MB after removing 120 of 144 MB: the space was not reclaimed", before>>20, after>>20)
	}
	if s, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ds[0])
	if err != nil || Sum(got) != ds[0] {
		t.Fatalf("kept blob after GC: %v", err)
	}
}
