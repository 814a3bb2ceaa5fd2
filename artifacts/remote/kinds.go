package remote

import (
	"github.com/fedpipe/fedpipe/artifacts/remote/backend"
	"github.com/fedpipe/fedpipe/artifacts/remote/dirremote"

	// The kinds every build of fedpipe knows register themselves; dirremote, imported
	// above for its file helpers, is the other.
	_ "github.com/fedpipe/fedpipe/artifacts/remote/s3remote"
)

// ErrUnreadableObject matches (errors.Is) the error of an object that is there but must
// not be read as one (see backend.ErrUnreadableObject and ReadRegular).
var ErrUnreadableObject = backend.ErrUnreadableObject

// maxRecordBytes bounds what is read of an object that is not a blob: an action entry, a
// checkpoint pointer, a lease, a kept-results index entry (each a few KiB of JSON).
const maxRecordBytes = backend.MaxRecordBytes

// IsDirAddress reports whether address names a directory remote: file:… or no scheme at
// all.
func IsDirAddress(address string) bool { return dirremote.IsAddress(address) }

// ParseDir returns the absolute, cleaned directory that a directory remote's address
// names (see dirremote.ParseDir).
func ParseDir(address string) (string, error) { return dirremote.ParseDir(address) }

// ReadRegular reads the file at path, which must be a regular file of at most limit bytes,
// as a directory remote reads an object (see dirremote.ReadRegular); refusals wrap
// ErrUnreadableObject.
func ReadRegular(path string, limit int64) ([]byte, error) {
	return dirremote.ReadRegular(path, limit)
}

// WriteFileAtomic writes data to path as a directory remote writes an object, safe on a
// shared filesystem (see dirremote.WriteFileAtomic).
func WriteFileAtomic(path string, data []byte) error { return dirremote.WriteFileAtomic(path, data) }
