//go:build !unix

package artifacts

import "os"

// tryLock is a no-op where flock(2) is unavailable; Badger's own directory
// lock still refuses a second opener, but without waiting.
func tryLock(f *os.File) (held bool, err error) { return false, nil }

func unlock(f *os.File) error { return nil }

// ReadOnly reports whether this process cannot write in the directory dir: unknown here,
// so false (opening the store then says why it cannot).
func ReadOnly(dir string) bool { return false }

// lockWait is a no-op where flock(2) is unavailable.
func lockWait(f *os.File) error { return nil }

// freeBytes is unknown on this platform.
func freeBytes(string) (int64, bool) { return 0, false }

// linkCount is unknown on this platform: 1.
func linkCount(string) uint64 { return 1 }

// canLock says whether tryLock really locks: not here, so no snapshot is ever judged dead.
const canLock = false

// allocatedBytes is fi's apparent size where allocated blocks are unknown.
func allocatedBytes(fi os.FileInfo) int64 { return fi.Size() }
