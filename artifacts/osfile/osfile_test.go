package osfile

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestKindNamesEachFileType(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "f")
	if err := os.WriteFile(reg, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "p")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipe here: %v", err)
	}
	for path, want := range map[string]string{
		reg: "a regular file", dir: "a directory", fifo: "a named pipe (FIFO)", "/dev/null": "a device",
	} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := Kind(st.Mode()); got != want {
			t.Errorf("Kind(%s) = %q, want %q", path, got, want)
		}
	}
}

func TestSHA256HashesRegularFilesOnly(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	content := []byte("fedpipe\n")
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	got, err := SHA256(p)
	if err != nil || got != hex.EncodeToString(sum[:]) {
		t.Fatalf("SHA256 = %q, %v; want %x", got, err, sum)
	}
	fifo := filepath.Join(dir, "p")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipe here: %v", err)
	}
	// Returns at once (a read would block for ever) and says what the path is.
	if _, err := SHA256(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("SHA256 of a named pipe: %v, want a refusal", err)
	}
	if _, err := SHA256(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("SHA256 of a missing file: %v, want not-exist", err)
	}
}
