package remote

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

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
