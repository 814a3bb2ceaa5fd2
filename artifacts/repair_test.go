package artifacts

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fillStore writes blobs of several sizes (inline and chunked), an action per pair of
// blobs and a ref, closes the store and returns what it wrote.
func fillStore(t *testing.T, dir string) (blobs []Digest, actions map[Digest]Action) {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	actions = map[Digest]Action{}
	for i := range 12 {
		size := 100 + i*37
		if i%2 == 1 {
			size = 200<<10 + i*4099 // chunked, in the value log
		}
		blobs = append(blobs, mustPut(t, s, randBytes(uint64(100+i), size)))
		if i%2 == 1 {
			key := Sum([]byte(fmt.Sprint("action", i)))
			a := Action{Outputs: map[string]Digest{"a": blobs[i-1], "b": blobs[i]}, Meta: map[string]string{"name": fmt.Sprint("stage ", i)}}
			if err := s.PutAction(key, a); err != nil {
				t.Fatal(err)
			}
			actions[key] = a
		}
	}
	if err := s.PutRef("latest", blobs[3]); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return blobs, actions
}

// Repair deletes the corrupt blob and the action that needs it, leaves everything intact,
// and a second fsck is clean.
func TestRepairLeavesACleanStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	blobs, _ := fillStore(t, dir)
	if err := FlipByte(dir, blobs[5], 1000); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r, _ := s.Fsck(); r.OK() {
		t.Fatal("fsck found nothing wrong")
	}
	r, err := s.Repair()
	if err != nil {
		t.Fatal(err)
	}
	if r.DeletedBlobs != 1 || r.DeletedActions != 1 || r.DeletedChunks < 1 {
		t.Errorf("repair: %+v", r)
	}
	after, err := s.Fsck()
	if err != nil || !after.OK() {
		t.Fatalf("fsck after repair: %+v %v", after, err)
	}
	for i, d := range blobs {
		_, err := s.Get(d)
		if (err == nil) != (i != 5) {
			t.Errorf("blob %d: %v", i, err)
		}
	}
}

// A flipped byte in the value log's header makes Badger refuse the store ("Invalid
// datakey id"); Salvage recovers every blob, action and ref into a fresh store, and leaves
// the damaged one as it was.
func TestSalvageRecoversFromValueLogHeader(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "s")
	blobs, actions := fillStore(t, dir)
	vlog := filepath.Join(dir, "000001.vlog")
	raw, err := os.ReadFile(vlog)
	if err != nil {
		t.Fatal(err)
	}
	raw[5] ^= 0x40
	if err := os.WriteFile(vlog, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "Invalid datakey id") {
		t.Fatalf("the damaged store opened, or failed otherwise: %v", err)
	}
	dst := filepath.Join(tmp, "salvaged")
	r, err := Salvage(dir, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.LostBlobs+r.LostActions+r.LostRefs != 0 || r.Blobs != len(blobs) || r.Actions != len(actions) || r.Refs != 1 || len(r.Fixes) != 1 {
		t.Fatalf("salvage: %+v", r)
	}
	s, err := Open(dst, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for key, want := range actions {
		a, ok, err := s.GetAction(key)
		if err != nil || !ok || a.Meta["name"] != want.Meta["name"] {
			t.Errorf("action %s: ok %v, %v", key.Short(), ok, err)
		}
	}
	for i, d := range blobs {
		if b, err := s.Get(d); err != nil || Sum(b) != d {
			t.Errorf("blob %d: %v", i, err)
		}
	}
	if d, ok, _ := s.GetRef("latest"); !ok || d != blobs[3] {
		t.Error("ref lost")
	}
	if got, _ := os.ReadFile(vlog); string(got[:20]) != string(raw[:20]) {
		t.Error("salvage wrote to the damaged store")
	}
}

// A value log that is damaged beyond its header is dropped: what lived in it is reported
// lost, everything else is recovered.
func TestSalvageReportsWhatIsLost(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "s")
	blobs, _ := fillStore(t, dir)
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Damage a chunk's bytes where they lie in the value log.
	if err := s.flipByte(blobs[7], 5); err != nil {
		t.Fatal(err)
	}
	s.Close()
	r, err := Salvage(dir, filepath.Join(tmp, "out"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.LostBlobs != 1 || r.LostActions != 1 || r.Blobs != len(blobs)-1 || !strings.Contains(strings.Join(r.Lost, "\n"), blobs[7].String()) {
		t.Errorf("salvage: %+v", r)
	}
}
