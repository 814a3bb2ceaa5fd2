//go:build unix

package dirremote

import (
	"errors"
	"os"
	"syscall"
)

// linkCount returns the number of hard links of the file at path.
func linkCount(path string) (uint64, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(sys.Nlink), true
}

// openNonblocking opens path for reading with O_NONBLOCK, so that opening a named pipe
// returns at once instead of waiting for a writer (ReadRegular then refuses it by its
// type). O_NONBLOCK does not change how a regular file reads.
func openNonblocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// processAlive reports whether a process with this pid runs on this host (a process of
// another user counts: kill answers EPERM).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
