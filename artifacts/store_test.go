package artifacts

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// logBuf collects Logf output.
type logBuf struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBuf) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func (l *logBuf) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = nil
}

func openAt(t *testing.T, dir string) (*Store, *logBuf) {
	t.Helper()
	lb := &logBuf{}
	s, err := Open(dir, Options{Logf: lb.logf})
	if err != nil {
		t.Fatal(err)
	}
	return s, lb
}

func openTest(t *testing.T) (*Store, *logBuf) {
	t.Helper()
	s, lb := openAt(t, t.TempDir())
	t.Cleanup(func() { s.Close() })
	return s, lb
}

func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

func mustPut(t *testing.T, s *Store, b []byte) Digest {
	t.Helper()
	d, err := s.Put(b)
	if err != nil {
		t.Fatal(err)
	}
	if d != Sum(b) {
		t.Fatalf("Put returned %s, want Sum %s", d, Sum(b))
	}
	return d
}

func TestDigest(t *testing.T) {
	d := Sum([]byte("abc"))
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if d.String() != want {
		t.Fatalf("Sum(abc) = %s, want %s", d, want)
	}
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{want, true},
		{strings.ToUpper(want), true},
		{want[:63], false},
		{want + "0", false},
		{"", false},
		{strings.Replace(want, "b", "g", 1), false},
	} {
		got, err := ParseDigest(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseDigest(%q) err = %v, want ok=%v", tc.in, err, tc.ok)
		}
		if tc.ok && got != d {
			t.Errorf("ParseDigest(%q) = %s, want %s", tc.in, got, d)
		}
	}
	var z Digest
	if !z.IsZero() || d.IsZero() {
		t.Error("IsZero wrong")
	}
}

func TestRoundTrip(t *testing.T) {
	s, lb := openTest(t)
	for _, tc := range []struct {
		name   string
		data   []byte
		inline bool
	}{
		{"empty", []byte{}, true},
		{"small", []byte("hello, fedpipe"), true},
		{"inline-max", randBytes(1, InlineMax), true},
		{"inline-max+1", randBytes(2, InlineMax+1), false},
		{"multi-chunk", randBytes(3, 3<<20), false},
		{"zeros", make([]byte, 5<<20), false}, // no cut points: MaxChunkSize chunks, all equal
		{"20MB", randBytes(4, 20<<20), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if ok, _ := s.Has(Sum(tc.data)); ok {
				t.Fatal("Has before Put")
			}
			d := mustPut(t, s, tc.data)
			if ok, err := s.Has(d); !ok || err != nil {
				t.Fatalf("Has = %v, %v", ok, err)
			}
			got, err := s.Get(d)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.data) {
				t.Fatalf("Get returned %d bytes differing from the %d put", len(got), len(tc.data))
			}
			if err := s.Verify(d); err != nil {
				t.Fatal(err)
			}
			before, _ := s.Stats()
			mustPut(t, s, tc.data) // idempotent
			after, _ := s.Stats()
			if before != after {
				t.Fatalf("second Put changed stats: %+v → %+v", before, after)
			}
			st := s.rawRecord(t, d)
			if (st[0] == recInline) != tc.inline {
				t.Fatalf("record type %#x, want inline=%v", st[0], tc.inline)
			}
		})
	}
	if _, err := s.Get(Sum([]byte("never stored"))); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of absent blob: err = %v, want ErrNotFound", err)
	}
	if lb.String() != "" {
		t.Fatalf("unexpected log output (Badger chatter should be silenced):\n%s", lb)
	}
}

// rawRecord returns the stored blob record of d.
func (s *Store) rawRecord(t *testing.T, d Digest) []byte {
	t.Helper()
	var v []byte
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(blobKey(d))
		if err != nil {
			return err
		}
		v, err = item.ValueCopy(nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (s *Store) setRaw(t *testing.T, key, val []byte) {
	t.Helper()
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(key, val) }); err != nil {
		t.Fatal(err)
	}
}

func TestDedupe(t *testing.T) {
	s, _ := openTest(t)
	shared := randBytes(10, 8<<20)
	x, y, z := randBytes(11, 300<<10), randBytes(12, 500<<10), randBytes(13, 200<<10)
	a := append(append([]byte{}, x...), shared...)
	b := append(append(append([]byte{}, y...), shared...), z...)
	mustPut(t, s, a)
	mustPut(t, s, b)
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Blobs != 2 || st.BlobBytes != int64(len(a)+len(b)) {
		t.Fatalf("stats %+v: want 2 blobs of %d bytes", st, len(a)+len(b))
	}
	unique := int64(len(shared) + len(x) + len(y) + len(z))
	// Only the chunks straddling the edges of the shared region may differ;
	// allow two average chunks per edge.
	if limit := unique + 4*AvgChunkSize*3/2; st.ChunkBytes > limit {
		t.Fatalf("stored %d chunk bytes for %d unique bytes (limit %d): shared region not deduplicated; %+v", st.ChunkBytes, unique, limit, st)
	}
	if st.ChunkRefs <= st.Chunks {
		t.Fatalf("no chunk is shared: %+v", st)
	}
	t.Logf("%+v", st)
}

func TestCorruptChunkIsMissAndRepairable(t *testing.T) {
	s, lb := openTest(t)
	shared := randBytes(50, 4<<20)
	a := append(randBytes(51, 200<<10), shared...)
	b := append(randBytes(52, 300<<10), shared...)
	da, db := mustPut(t, s, a), mustPut(t, s, b)

	// Corrupt a chunk in the middle of the shared region, via blob a.
	if err := s.flipByte(da, len(a)-len(shared)/2); err != nil {
		t.Fatal(err)
	}
	for _, d := range []Digest{da, db} {
		if got, err := s.Get(d); !errors.Is(err, ErrNotFound) || got != nil {
			t.Fatalf("Get of corrupt blob %s = %d bytes, %v; want nil, ErrNotFound", d.Short(), len(got), err)
		}
		if err := s.Verify(d); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Verify of corrupt blob = %v", err)
		}
		if !strings.Contains(lb.String(), d.String()) {
			t.Fatalf("log does not name corrupt blob %s:\n%s", d, lb)
		}
	}
	// A Put of b (not a, through which the chunk was corrupted) repairs the
	// shared chunk, so both read again.
	lb.reset()
	mustPut(t, s, b)
	if !strings.Contains(lb.String(), "rewriting") {
		t.Fatalf("Put did not report repairing the chunk:\n%s", lb)
	}
	for _, tc := range []struct {
		d    Digest
		want []byte
	}{{da, a}, {db, b}} {
		got, err := s.Get(tc.d)
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Fatalf("Get after repair: %d bytes, %v", len(got), err)
		}
	}
}

func TestCorruptRecords(t *testing.T) {
	for _, tc := range []struct {
		name    string
		data    []byte
		corrupt func(t *testing.T, s *Store, d Digest)
	}{
		{"inline-byte", []byte("small blob"), func(t *testing.T, s *Store, d Digest) {
			if err := s.flipByte(d, 3); err != nil {
				t.Fatal(err)
			}
		}},
		{"inline-truncated", []byte("small blob"), func(t *testing.T, s *Store, d Digest) {
			s.setRaw(t, blobKey(d), encodeInline([]byte("small")))
		}},
		{"garbage-record", randBytes(60, 1<<20), func(t *testing.T, s *Store, d Digest) {
			s.setRaw(t, blobKey(d), []byte{recChunked, 0xff})
		}},
		{"unknown-record-type", []byte("x"), func(t *testing.T, s *Store, d Digest) {
			s.setRaw(t, blobKey(d), []byte{0x7f, 'x'})
		}},
		{"chunk-truncated", randBytes(61, 1<<20), func(t *testing.T, s *Store, d Digest) {
			rec, _ := decodeRecord(s.rawRecord(t, d))
			s.setRaw(t, chunkKey(rec.chunks[0].d), []byte("short"))
		}},
		{"chunk-deleted", randBytes(62, 1<<20), func(t *testing.T, s *Store, d Digest) {
			rec, _ := decodeRecord(s.rawRecord(t, d))
			if err := s.db.Update(func(txn *badger.Txn) error { return txn.Delete(chunkKey(rec.chunks[1].d)) }); err != nil {
				t.Fatal(err)
			}
		}},
		{"record-lists-wrong-chunks", randBytes(63, 1<<20), func(t *testing.T, s *Store, d Digest) {
			// A well-formed record whose chunks are intact but belong to other content.
			other := randBytes(64, 1<<20)
			mustPut(t, s, other)
			s.setRaw(t, blobKey(d), s.rawRecord(t, Sum(other)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, lb := openTest(t)
			d := mustPut(t, s, tc.data)
			tc.corrupt(t, s, d)
			if _, err := s.Get(d); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Get after corruption: err = %v, want ErrNotFound", err)
			}
			if !strings.Contains(lb.String(), d.String()) {
				t.Fatalf("log does not name %s:\n%s", d, lb)
			}
			mustPut(t, s, tc.data)
			got, err := s.Get(d)
			if err != nil || !bytes.Equal(got, tc.data) {
				t.Fatalf("Get after re-Put: %d bytes, %v", len(got), err)
			}
		})
	}
}

func TestActions(t *testing.T) {
	s, lb := openTest(t)
	model := randBytes(70, 2<<20)
	metrics := []byte("round,acc\n1,0.5\n")
	dm, dx := mustPut(t, s, model), mustPut(t, s, metrics)
	key := Sum([]byte("train/v1/params"))

	if _, ok, err := s.GetAction(key); ok || err != nil {
		t.Fatalf("GetAction before Put = %v, %v", ok, err)
	}
	missing := Sum([]byte("not stored"))
	err := s.PutAction(key, Action{Outputs: map[string]Digest{"model": dm, "extra": missing}})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"extra"`) {
		t.Fatalf("PutAction with missing output: err = %v, want ErrNotFound naming \"extra\"", err)
	}
	if err := s.PutAction(key, Action{Outputs: map[string]Digest{"": dm}}); err == nil {
		t.Fatal("PutAction accepted an empty output name")
	}
	if _, ok, _ := s.GetAction(key); ok {
		t.Fatal("refused PutAction left an entry")
	}

	a := Action{Outputs: map[string]Digest{"model": dm, "metrics": dx}, Meta: map[string]string{"seconds": "1.5", "name": "train"}}
	if err := s.PutAction(key, a); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.GetAction(key)
	if !ok || err != nil {
		t.Fatalf("GetAction = %v, %v", ok, err)
	}
	if fmt.Sprint(got) != fmt.Sprint(a) {
		t.Fatalf("GetAction = %v, want %v", got, a)
	}

	// Corrupt one output: the action becomes a miss, with the reason logged.
	if err := s.flipByte(dm, 12345); err != nil {
		t.Fatal(err)
	}
	lb.reset()
	if _, ok, err := s.GetAction(key); ok || err != nil {
		t.Fatalf("GetAction with corrupt output = %v, %v; want miss", ok, err)
	}
	if !strings.Contains(lb.String(), `output "model"`) {
		t.Fatalf("log does not explain the miss:\n%s", lb)
	}
	mustPut(t, s, model)
	if _, ok, _ := s.GetAction(key); !ok {
		t.Fatal("GetAction still a miss after repairing the output")
	}

	// An unreadable record is a miss, not an error.
	s.setRaw(t, actionKey(key), []byte("{not json"))
	if _, ok, err := s.GetAction(key); ok || err != nil {
		t.Fatalf("GetAction of garbage record = %v, %v", ok, err)
	}
}

func TestActionEncodingDeterministic(t *testing.T) {
	d1, d2 := Sum([]byte("1")), Sum([]byte("2"))
	m1 := map[string]Digest{}
	m1["b"], m1["a"] = d2, d1
	m2 := map[string]Digest{}
	m2["a"], m2["b"] = d1, d2
	e1, _ := encodeAction(Action{Outputs: m1, Meta: map[string]string{"z": "1", "y": "2"}})
	e2, _ := encodeAction(Action{Outputs: m2, Meta: map[string]string{"y": "2", "z": "1"}})
	if !bytes.Equal(e1, e2) {
		t.Fatalf("encodings differ:\n%s\n%s", e1, e2)
	}
	want := `{"v":1,"outputs":{"a":"` + d1.String() + `","b":"` + d2.String() + `"},"meta":{"y":"2","z":"1"}}`
	if string(e1) != want {
		t.Fatalf("encoding\n got %s\nwant %s", e1, want)
	}
}

func TestRefs(t *testing.T) {
	s, _ := openTest(t)
	d := mustPut(t, s, []byte("checkpoint 3"))
	if _, ok, err := s.GetRef("stage/k/latest"); ok || err != nil {
		t.Fatalf("GetRef unset = %v, %v", ok, err)
	}
	if err := s.PutRef("stage/k/latest", Sum([]byte("absent"))); !errors.Is(err, ErrNotFound) {
		t.Fatalf("PutRef to absent blob: %v", err)
	}
	if err := s.PutRef("stage/k/latest", d); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.GetRef("stage/k/latest"); !ok || err != nil || got != d {
		t.Fatalf("GetRef = %s, %v, %v", got.Short(), ok, err)
	}
	if err := s.DeleteRef("stage/k/latest"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRef("stage/k/latest"); err != nil {
		t.Fatal("deleting an unset ref:", err)
	}
	if _, ok, _ := s.GetRef("stage/k/latest"); ok {
		t.Fatal("ref survived DeleteRef")
	}
	for _, bad := range []string{"", strings.Repeat("x", MaxRefName+1)} {
		if err := s.PutRef(bad, d); err == nil {
			t.Errorf("PutRef accepted name of %d bytes", len(bad))
		}
	}
}

func TestReopenAndFlipByte(t *testing.T) {
	dir := t.TempDir()
	s, _ := openAt(t, dir)
	big, small := randBytes(80, 3<<20), []byte("small")
	db, ds := mustPut(t, s, big), mustPut(t, s, small)
	key := Sum([]byte("k"))
	if err := s.PutAction(key, Action{Outputs: map[string]Digest{"big": db, "small": ds}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRef("latest", db); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, _ = openAt(t, dir)
	if got, err := s.Get(db); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("Get after reopen: %v", err)
	}
	if _, ok, err := s.GetAction(key); !ok || err != nil {
		t.Fatalf("GetAction after reopen = %v, %v", ok, err)
	}
	if got, ok, _ := s.GetRef("latest"); !ok || got != db {
		t.Fatal("ref lost on reopen")
	}
	st, _ := s.Stats()
	if st.Blobs != 2 || st.Actions != 1 || st.Refs != 1 || st.InlineBlobs != 1 {
		t.Fatalf("stats after reopen: %+v", st)
	}
	s.Close()

	if err := FlipByte(dir, db, len(big)-1); err != nil {
		t.Fatal(err)
	}
	if err := FlipByte(dir, db, len(big)); err == nil {
		t.Fatal("FlipByte accepted an offset past the end")
	}
	if err := FlipByte(dir, Sum([]byte("absent")), 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("FlipByte of absent blob: %v", err)
	}
	s, lb := openAt(t, dir)
	defer s.Close()
	if _, err := s.Get(db); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after FlipByte: %v", err)
	}
	if _, ok, _ := s.GetAction(key); ok {
		t.Fatal("GetAction hit with a corrupted output")
	}
	if !strings.Contains(lb.String(), db.String()) {
		t.Fatalf("corruption not logged:\n%s", lb)
	}
}

func TestFormatMismatch(t *testing.T) {
	dir := t.TempDir()
	s, _ := openAt(t, dir)
	s.setRaw(t, []byte(keyFormat), []byte("fedpipe-store 999"))
	s.Close()
	if s, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "format") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open of foreign-format store: %v", err)
	}
	// The failed Open released the lock.
	if _, err := Open(dir, Options{LockTimeout: -1}); err == nil || strings.Contains(err.Error(), "in use") {
		t.Fatalf("second Open: %v", err)
	}
}

func TestConcurrentPuts(t *testing.T) {
	s, _ := openTest(t)
	shared := randBytes(90, 2<<20)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := append(randBytes(uint64(100+i%2), 100<<10), shared...)
			d, err := s.Put(b)
			if err == nil {
				var got []byte
				got, err = s.Get(d)
				if err == nil && !bytes.Equal(got, b) {
					err = errors.New("wrong bytes")
				}
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := s.Stats(); st.Blobs != 2 {
		t.Fatalf("want 2 distinct blobs, stats %+v", st)
	}
}

func BenchmarkPut20MB(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	data := randBytes(1, 20<<20)
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		data[0] = byte(i) // new content (one chunk changes) each time
		data[len(data)-1] = byte(i >> 8)
		if _, err := s.Put(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet20MB(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	data := randBytes(1, 20<<20)
	d, err := s.Put(data)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := s.Get(d); err != nil {
			b.Fatal(err)
		}
	}
}

// TestActionMeta: ActionMeta returns an entry's meta without reading its outputs, so it
// still describes a result one of whose blobs is corrupt (which GetAction refuses).
func TestActionMeta(t *testing.T) {
	s, _ := openTest(t)
	d := mustPut(t, s, []byte("fingerprints of a run"))
	key := Sum([]byte("train/v1/meta"))
	if m, ok, err := s.ActionMeta(key); ok || err != nil || m != nil {
		t.Fatalf("ActionMeta before Put = %v, %v, %v", m, ok, err)
	}
	meta := map[string]string{"commit": "abc", "seconds": "2.000"}
	if err := s.PutAction(key, Action{Outputs: map[string]Digest{"fingerprints": d}, Meta: meta}); err != nil {
		t.Fatal(err)
	}
	if err := s.flipByte(d, 0); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.GetAction(key); ok {
		t.Fatal("GetAction accepted a corrupt output")
	}
	if m, ok, err := s.ActionMeta(key); !ok || err != nil || !reflect.DeepEqual(m, meta) {
		t.Errorf("ActionMeta = %v, %v, %v; want %v", m, ok, err, meta)
	}
}

// A store whose directory is removed while it is open (a job script cleaning up under a
// process still closing it): Badger retries its flush forever, but Close gives up after
// CloseTimeout and says why, so the process can end.
func TestCloseIsBoundedWhenTheDirectoryIsGone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir, Options{CloseTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if _, err := s.Put([]byte(fmt.Sprintf("blob %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Close of a store whose directory was removed reported no error")
		}
		t.Logf("Close: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("Close did not return within a minute of its 1 s timeout")
	}
}

// An empty value-log file beside a closed store (one was found after a run closed its
// store normally) does not stop the next Open, and what the store held is still there.
func TestOpenWithAnEmptyValueLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("value-log "), 2000) // over the 4 KiB threshold: in the value log
	d, err := s.Put(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "000002.vlog"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var notes []string
	s, err = Open(dir, Options{Logf: func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatalf("Open with an empty value-log file: %v", err)
	}
	defer s.Close()
	got, err := s.Get(d)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after reopening: %d bytes, %v", len(got), err)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "000002.vlog") {
		t.Errorf("the removal was not reported: %q", notes)
	}
}

// An empty memtable file, as a process killed between Badger creating a memtable's log and
// sizing it leaves, makes Badger refuse the store; Open removes it, and what the store held
// (written before, so in another memtable or a table) is still there.
func TestOpenWithAnEmptyMemtableFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("a small value, kept in the memtable's log")
	d, err := s.Put(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mems, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	empty := filepath.Join(dir, "00009.mem")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The premise: Badger alone refuses it.
	if db, err := badger.Open(badgerOptions(dir, nil)); err == nil {
		db.Close()
		t.Fatalf("Badger opened a store with an empty memtable file (memtables before: %v); the test shows nothing", mems)
	} else if !strings.Contains(err.Error(), "Create a new file") {
		t.Logf("Badger's refusal: %v", err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil { // Badger may have sized it
		t.Fatal(err)
	}
	var notes []string
	s, err = Open(dir, Options{Logf: func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatalf("Open with an empty memtable file: %v", err)
	}
	defer s.Close()
	got, err := s.Get(d)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after reopening: %q, %v", got, err)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "00009.mem") {
		t.Errorf("the removal was not reported: %q", notes)
	}
}

// Badger's warnings go to Options.Logf (WithLoggingLevel would install Badger's own
// stderr logger over it), except the benign "Unable to fill tables" of a compaction with
// nothing to do.
func TestBadgerWarningsGoToLogf(t *testing.T) {
	var got []string
	opt := badgerOptions(t.TempDir(), func(f string, a ...any) { got = append(got, fmt.Sprintf(f, a...)) })
	opt.Logger.Warningf("value log %d is odd\n", 7)
	opt.Logger.Warningf("While running doCompact with %v. Error: %v\n", "{level:5}", "Unable to fill tables")
	if len(got) != 1 || got[0] != "badger warning: value log 7 is odd" {
		t.Errorf("Logf got %q, want just the first warning", got)
	}
}
