//go:build unix

package remote

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ReadRegular reads a regular file (through a link too) and refuses, at once and naming
// the file, a named pipe, a link to /dev/zero, a directory and a file larger than its
// limit (a 20 GB sparse file is refused without allocating it); a missing file is
// fs.ErrNotExist.
func TestReadRegularRefusesSpecialAndOversizeFiles(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	fifo := filepath.Join(dir, "fifo")
	zero := filepath.Join(dir, "zero")
	sparse := filepath.Join(dir, "sparse")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(sparse)
	if err == nil {
		err = f.Truncate(20 << 30)
		f.Close()
	}
	if err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
	for _, path := range []string{regular, link} {
		if b, err := ReadRegular(path, 5); err != nil || string(b) != "hello" {
			t.Errorf("%s: %q, %v", path, b, err)
		}
	}
	for path, says := range map[string]string{fifo: "named pipe", zero: "a device", dir: "a directory",
		sparse: "holds 21474836480 bytes, more than the 8589934592", regular + "": "holds 5 bytes, more than the 4"} {
		limit := int64(8 << 30)
		if path == regular {
			limit = 4
		}
		start := time.Now()
		_, err := ReadRegular(path, limit)
		if !errors.Is(err, ErrUnreadableObject) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v, want a refusal naming it and saying %q", path, err, says)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: refused after %v", path, d)
		}
	}
	if _, err := ReadRegular(filepath.Join(dir, "absent"), 5); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent: %v, want fs.ErrNotExist", err)
	}
}

// A pushed entry records its outputs' sizes; a blob object larger than its recorded size
// is refused before it is read (a miss naming the file), although it would be within the
// bound of a blob of unknown size; a read-only directory remote opens and serves it, and
// refuses writes.
func TestFetchBoundsBlobsBySizeTheEntryRecords(t *testing.T) {
	b := dirBackend(t)
	r, _ := b.open(t, Options{})
	ctx := context.Background()
	src := openStore(t)
	key, a := putAction(t, src, 3)
	if _, err := r.PushAction(ctx, src, key, a); err != nil {
		t.Fatal(err)
	}
	ro, _ := b.open(t, Options{ReadOnly: true})
	if _, ok, _, err := ro.FetchAction(ctx, openStore(t), key); err != nil || !ok {
		t.Fatalf("read-only fetch: %v %v", ok, err)
	}
	if err := ro.DeleteCheckpoint(ctx, key); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a delete through a read-only remote: %v", err)
	}
	obj := b.objectPath("cas/" + a.Outputs["metrics"].String())
	size, err := src.Size(a.Outputs["metrics"])
	if want := int64(len("round,acc\n1,0.5\n\x03")); err != nil || size != want {
		t.Fatalf("Size of the metrics blob: %d, %v; want %d", size, err, want)
	}
	if err := os.Truncate(obj, size+1); err != nil {
		t.Fatal(err)
	}
	_, ok, _, err := ro.FetchAction(ctx, openStore(t), key)
	if ok || err == nil || !strings.Contains(err.Error(), obj) || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("an object one byte over its recorded size: ok=%v %v, want a miss naming %s", ok, err, obj)
	}
}
