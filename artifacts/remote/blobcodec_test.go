package remote

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
)

// A table-like blob is stored as a zstd frame well under its size and read back exactly;
// a blob that does not shrink is stored as it is; an object written before compression
// (the blob's own bytes) still reads; a frame or raw object with a flipped byte is corrupt.
func TestBlobsStoredCompressedWhenItPays(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	table := bytes.Repeat([]byte("client,round,accuracy\n17,400,0.9583333\n"), 4000)
	noise := make([]byte, 64<<10)
	x := uint64(88172645463325252)
	for i := range noise { // xorshift: bytes zstd cannot shrink
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		noise[i] = byte(x)
	}
	object := func(d artifacts.Digest) string { return filepath.Join(dir, "cas", d.String()) }
	for _, c := range []struct {
		name       string
		data       []byte
		compressed bool
	}{{"table", table, true}, {"noise", noise, false}} {
		d, uploaded, err := r.PutBlob(ctx, c.data)
		if err != nil || !uploaded {
			t.Fatalf("%s: put: uploaded %v, %v", c.name, uploaded, err)
		}
		obj, err := os.ReadFile(object(d))
		if err != nil {
			t.Fatal(err)
		}
		if c.compressed && len(obj) > len(c.data)/10 {
			t.Errorf("%s: stored %d bytes for %d, want a frame under a tenth", c.name, len(obj), len(c.data))
		}
		if !c.compressed && !bytes.Equal(obj, c.data) {
			t.Errorf("%s: stored %d bytes, want the blob itself (%d)", c.name, len(obj), len(c.data))
		}
		got, err := r.GetBlob(ctx, d)
		if err != nil || !bytes.Equal(got, c.data) {
			t.Fatalf("%s: get: %d bytes, %v; want the blob back", c.name, len(got), err)
		}
	}
	// An object as written before compression: the blob's own bytes, here compressible.
	legacy := bytes.Repeat([]byte("legacy "), 1000)
	ld := artifacts.Sum(legacy)
	if err := os.WriteFile(object(ld), legacy, 0o644); err != nil {
		t.Fatal(err)
	}
	fresh, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := fresh.GetBlob(ctx, ld); err != nil || !bytes.Equal(got, legacy) {
		t.Fatalf("uncompressed object: %d bytes, %v", len(got), err)
	}
	// Corruption of either form reads as missing.
	for _, data := range [][]byte{table, legacy} {
		d := artifacts.Sum(data)
		obj, _ := os.ReadFile(object(d))
		obj[len(obj)/2] ^= 0x40
		if err := os.WriteFile(object(d), obj, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := fresh.GetBlob(ctx, d); !errors.Is(err, artifacts.ErrNotFound) {
			t.Errorf("flipped byte in the object of %s: %v, want a corrupt (not found) blob", d.Short(), err)
		}
	}
}

// rleBomb returns a zstd frame of n zero bytes (n a multiple of 128 KiB) without a content
// size: RLE blocks of 128 KiB, 4 bytes each.
func rleBomb(n int64) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38}
	for i, k := int64(0), n/(128<<10); i < k; i++ {
		h := uint32(128<<10)<<3 | 1<<1
		if i == k-1 {
			h |= 1
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16), 0)
	}
	return b
}

// Decoding stops at the size the entry records: a frame of 4 GiB of zeros under a recorded
// MiB is refused after a MiB (milliseconds), a frame whose header declares another size
// before decoding, a raw object of another size at once; a genuine frame under its exact
// size reads back, and under a size one byte off is refused.
func TestDecodeStopsAtRecordedSize(t *testing.T) {
	bomb := rleBomb(4 << 30)
	start := time.Now()
	_, err := decodeObject(bomb, artifacts.Sum(nil), 1<<20)
	if took := time.Since(start); err == nil || !strings.Contains(err.Error(), "more than the 1048576 bytes") || took > time.Second {
		t.Errorf("4 GiB frame under 1 MiB: %v after %v, want refused at the MiB within a second", err, took)
	}
	t.Logf("a %d-byte frame of 4 GiB under a recorded MiB refused in %v", len(bomb), time.Since(start))
	if err := codec(); err != nil {
		t.Fatal(err)
	}
	table := bytes.Repeat([]byte("client,round,accuracy\n17,400,0.9583333\n"), 4000)
	d, frame := artifacts.Sum(table), encodeBlob(table)
	if got, err := decodeObject(frame, d, int64(len(table))); err != nil || !bytes.Equal(got, table) {
		t.Fatalf("genuine frame under its size: %d bytes, %v", len(got), err)
	}
	for _, size := range []int64{int64(len(table)) + 1, int64(len(table)) - 1} {
		if _, err := decodeObject(frame, d, size); err == nil || !strings.Contains(err.Error(), "declares") {
			t.Errorf("frame of %d bytes under a recorded %d: %v, want refused by its header", len(table), size, err)
		}
	}
	if _, err := decodeObject(table, d, int64(len(table))+1); err == nil {
		t.Error("a raw object one byte short of its recorded size was accepted")
	}
	if got, err := decodeObject(table, d, -1); err != nil || !bytes.Equal(got, table) {
		t.Errorf("raw object, no recorded size: %v", err)
	}
}
