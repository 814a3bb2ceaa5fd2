// Package osfile holds what fedpipe says and computes about a file on disk, in one place:
// the words for a file's kind in a refusal, and the SHA-256 of a regular file's content.
// It imports nothing of fedpipe's, so any layer may use it.
package osfile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Kind names a file's kind, with its article, for a message such as "x is a directory,
// not a regular file": "a regular file", "a directory", "a named pipe (FIFO)", "a device",
// "a socket", else "a special file (<mode type>)".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file (" + m.Type().String() + ")"
}

// SHA256 returns the lower-case hex SHA-256 of the content of the regular file at path
// (a symbolic link to one is followed). Anything else is refused before it is opened:
// opening a named pipe would block for ever, and a device may never end.
func SHA256(path string) (string, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file (%v)", path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
