package artifacts

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// residentUnder sums the resident bytes (/proc/self/smaps "Rss:") of the mappings of
// files in dir.
func residentUnder(t *testing.T, dir string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps")
	}
	defer f.Close()
	var total int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if _, _, path, ok := parseMapsLine(line); ok {
			in = filepath.Dir(path) == dir
			continue
		}
		if in && strings.HasPrefix(line, "Rss:") {
			kb, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			total += kb << 10
		}
	}
	return total
}

// openResolved opens a store in a fresh directory named without symbolic links, as
// /proc/self/maps names the files mapped from it; the test closes it.
func openResolved(t *testing.T) (string, *Store) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return dir, s
}

// Blobs written into the store leave their value-log pages resident until released;
// ReleaseMapped drops them from the process (tens of MB here to almost nothing) and the
// blobs still read back intact.
func TestReleaseMappedDropsStorePages(t *testing.T) {
	dir, s := openResolved(t)
	s.mapped.n.Store(-1 << 40) // no automatic release during the writes
	var ds []Digest
	var blobs [][]byte
	for i := 0; i < 3; i++ {
		b := randomBlob(20<<20, uint64(i)) // 20 MB each, no repeats for the chunker to share
		d, err := s.Put(b)
		if err != nil {
			t.Fatal(err)
		}
		ds, blobs = append(ds, d), append(blobs, b)
	}
	before := residentUnder(t, dir)
	if before < 32<<20 {
		t.Fatalf("only %d bytes of the store's files resident after writing 60 MB: nothing to release", before)
	}
	if n := s.ReleaseMapped(); n == 0 {
		t.Fatal("ReleaseMapped advised no mapping")
	}
	if after := residentUnder(t, dir); after > before/8 {
		t.Errorf("resident %d → %d bytes: the pages were not released", before, after)
	}
	for i, d := range ds {
		got, err := s.Get(d)
		if err != nil || !bytes.Equal(got, blobs[i]) {
			t.Fatalf("blob %d after the release: err %v, equal %v", i, err, bytes.Equal(got, blobs[i]))
		}
	}
}

func TestParseMapsLine(t *testing.T) {
	start, end, path, ok := parseMapsLine("7f0000000000-7f0004000000 rw-s 00000000 08:01 1234   /tmp/s/000001.vlog")
	if !ok || start != 0x7f0000000000 || end != 0x7f0004000000 || path != "/tmp/s/000001.vlog" {
		t.Errorf("got %x %x %q %v", start, end, path, ok)
	}
	if _, _, _, ok := parseMapsLine("7f0000000000-7f0004000000 rw-p 00000000 00:00 0"); ok {
		t.Error("an anonymous mapping parsed as a file")
	}
}

// Verifying blobs reads every byte through the mapping just as Get does (GetAction
// verifies every output of a cached stage, so planning a sweep over a large store reads
// GBs): those pages are released too, so verifying 96 MB leaves less than the release
// threshold resident.
func TestVerifyReleasesStorePages(t *testing.T) {
	dir, s := openResolved(t)
	var ds []Digest
	for i := 0; i < 4; i++ {
		d, err := s.Put(randomBlob(24<<20, uint64(i)))
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	s.ReleaseMapped()
	s.mapped.n.Store(0)
	for _, d := range ds {
		if err := s.Verify(d); err != nil {
			t.Fatal(err)
		}
	}
	if got := residentUnder(t, dir); got >= releaseEvery {
		t.Errorf("%d MB of the store's files resident after verifying 96 MB: Verify's pages were not released", got>>20)
	}
}
