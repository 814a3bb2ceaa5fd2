package artifacts

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
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

// putRandomBlobs stores n random 24 MB blobs (seeds first, first+1, …) and returns their
// digests.
func putRandomBlobs(t *testing.T, s *Store, n int, first uint64) []Digest {
	t.Helper()
	var ds []Digest
	for i := range n {
		d, err := s.Put(randomBlob(24<<20, first+uint64(i)))
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	return ds
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
	ds := putRandomBlobs(t, s, 6, 0)
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

// A reader's snapshot hard-links the holder's value logs, and Badger deletes a rewritten
// value log by truncating it: GC must not rewrite what a live snapshot shares. With a
// reader open it removes the blobs but leaves the value log (saying why), and the reader
// still reads every blob it saw; once the reader is gone, the next GC gives the space back.
// A reader that comes while GC may rewrite waits for the lock instead of linking.
func TestGCLeavesSnapshotsIntact(t *testing.T) {
	defer func(w time.Duration) { reclaimWait = w }(reclaimWait)
	reclaimWait = 200 * time.Millisecond
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	ds := putRandomBlobs(t, s, 6, 10)
	// Rotate the value log so that the blobs sit in older files, which a snapshot links.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	reader, err := OpenReader(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if reader.snapshot == "" || s.linkedValueLogs() == 0 {
		t.Fatalf("the reader shares no value-log file with the holder (snapshot %q): the case is not exercised", reader.snapshot)
	}
	r, err := s.GC(nil, map[Digest]bool{ds[0]: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Blobs != 5 || r.Unreclaimed == "" {
		t.Errorf("GC beside a snapshot: removed %d blobs (want 5), unreclaimed %q (want a reason)", r.Blobs, r.Unreclaimed)
	}
	for i, d := range ds {
		if err := reader.Verify(d); err != nil {
			t.Errorf("the reader lost blob %d to the holder's GC: %v", i, err)
		}
	}
	if err := reader.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err = s.GC(nil, map[Digest]bool{ds[0]: true}); err != nil || r.Unreclaimed != "" {
		t.Fatalf("GC without readers: %v, unreclaimed %q", err, r.Unreclaimed)
	}
	if r.DiskAfter >= r.DiskBefore-100<<20 {
		t.Errorf("GC without readers: %d MB on disk before, %d MB after; want the 120 MB removed given back", r.DiskBefore>>20, r.DiskAfter>>20)
	}

	// While the marker is up, a reader waits for the lock rather than snapshotting.
	if err := os.WriteFile(filepath.Join(dir, reclaimMarker), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if late, err := OpenReader(dir, Options{LockTimeout: 100 * time.Millisecond}); err == nil {
		late.Close()
		t.Error("a reader opened a snapshot while the holder was reclaiming")
	} else if !errors.Is(err, ErrLocked) {
		t.Errorf("a reader during a reclaim: %v, want it to have waited for the lock", err)
	}

	// A marker left behind (its gc died) is gone once a new holder opens the store, so
	// readers snapshot that holder's store again.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	reader, err = OpenReader(dir, Options{LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("a reader beside a new holder after a stale marker: %v", err)
	}
	reader.Close()
}
