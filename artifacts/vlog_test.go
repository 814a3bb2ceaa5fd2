package artifacts

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vlogStore writes n blobs whose chunks live in the value log (over 4 KiB each), closes
// the store, and returns them with the value log's path.
func vlogStore(t *testing.T, dir string, n int) ([]Digest, string) {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var blobs []Digest
	for i := range n {
		blobs = append(blobs, mustPut(t, s, randBytes(uint64(700+i), 20<<10+i*97)))
	}
	if err := s.PutAction(Sum([]byte("action")), Action{Outputs: map[string]Digest{"out": blobs[n-1]}, Meta: map[string]string{"name": "last"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	vlog, _ := newestValueLog(dir)
	if vlog == "" {
		t.Fatal("no value log")
	}
	return blobs, vlog
}

// A flipped byte in the middle of the newest value log (issue 69: the first `status`
// truncated a quickstart store's 000001.vlog from 2,910,210 to 1,451,904 bytes, and 155 of
// its 355 blobs were gone for good; a flip in the first entry's header cut it to 20 bytes)
// is refused at open with ErrDamaged naming the file and the offset, by Open and
// OpenReader alike, and the file is left as it was. Salvage then keeps every value but the
// one the flip hit: those after the bad entry too. On main the first Open cuts the log.
func TestDamagedValueLogIsNeverTruncated(t *testing.T) {
	const n = 60
	clean := filepath.Join(t.TempDir(), "clean")
	blobs, vlog := vlogStore(t, clean, n)
	raw, err := os.ReadFile(vlog)
	if err != nil {
		t.Fatal(err)
	}
	for _, where := range []struct {
		name string
		at   int
	}{{"middle", len(raw) / 2}, {"first entry's header", vlogHeaderSize + 3}} {
		t.Run(where.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			if err := os.CopyFS(dir, os.DirFS(clean)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, filepath.Base(vlog))
			flipped := append([]byte(nil), raw...)
			flipped[where.at] ^= 0x20
			if err := os.WriteFile(path, flipped, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, open := range []func(string, Options) (*Store, error){Open, OpenReader, Open} {
				s, err := open(dir, Options{})
				if err == nil {
					s.Close()
					t.Fatal("the store opened")
				}
				if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), filepath.Base(vlog)) || !strings.Contains(err.Error(), "at byte ") {
					t.Fatalf("want ErrDamaged naming %s and the offset, got %v", filepath.Base(vlog), err)
				}
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, flipped) {
				t.Fatalf("the value log changed: %d bytes, was %d", len(got), len(flipped))
			}
			// The one blob whose chunk the flip hit is lost; every other comes back.
			hit := -1
			for i, d := range blobs {
				b := randBytes(uint64(700+i), 20<<10+i*97)
				if at := bytes.Index(raw, b); at >= 0 && where.at >= at-64 && where.at < at+len(b) {
					hit = i
				}
				_ = d
			}
			want := map[Digest]bool{}
			for i, d := range blobs {
				if i != hit {
					want[d] = true
				}
			}
			r := salvageAll(t, dir, blobs, want)
			if r.Blobs < n-1 {
				t.Errorf("salvaged %d of %d blobs: %+v", r.Blobs, n, r)
			}
			if !strings.Contains(fmt.Sprint(r.Fixes), filepath.Base(vlog)) {
				t.Errorf("salvage does not name the value log: %q", r.Fixes)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, flipped) {
				t.Fatal("salvage changed the damaged store's value log")
			}
		})
	}
}

// A torn tail (zeros after the last entry, as a killed writer leaves its preallocated log)
// is not damage: Open opens the store, and Badger trims the tail.
func TestValueLogTornTailOpens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	blobs, vlog := vlogStore(t, dir, 10)
	f, err := os.OpenFile(vlog, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, 1<<20))
	f.Write([]byte{0, 0, 40, 3}) // half an entry's header
	f.Close()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, d := range blobs {
		if _, err := s.Get(d); err != nil {
			t.Error(err)
		}
	}
}
