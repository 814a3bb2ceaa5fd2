//go:build unix

package dirremote

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts/remote/backend"
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
		if !errors.Is(err, backend.ErrUnreadableObject) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), says) {
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
