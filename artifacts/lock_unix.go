//go:build unix

package artifacts

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive, non-blocking flock(2) on f. It reports
// held=true, err=nil if another open file description holds the lock. The
// kernel drops the lock when the holder's process dies, however it dies, so a
// lock can never outlive its owner.
func tryLock(f *os.File) (held bool, err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return false, nil
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return true, nil
		}
		return false, err
	}
}

// lockWait takes an exclusive flock(2) on f, waiting for another holder to release it.
func lockWait(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// ReadOnly reports whether this process cannot write in the directory dir: a read-only
// filesystem or mount, or no write permission. Such a store's lock cannot be taken;
// OpenReader reads it through a copy in the temporary directory instead.
func ReadOnly(dir string) bool {
	err := syscall.Access(dir, 2) // W_OK
	return errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}

// unlock releases the lock taken by tryLock.
func unlock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

// freeBytes returns the bytes available to an unprivileged writer on dir's filesystem.
func freeBytes(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}

// linkCount is the number of hard links to path's file (1 when unknown).
func linkCount(path string) uint64 {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 1
	}
	return uint64(st.Nlink)
}

// canLock says whether tryLock really locks (a dead holder's lock can then be told).
const canLock = true

// allocatedBytes is the disk space fi's file takes: its allocated blocks (a sparse file's
// holes take none).
func allocatedBytes(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}
