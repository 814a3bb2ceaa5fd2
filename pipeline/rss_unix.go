//go:build unix

package pipeline

import (
	"runtime"
	"syscall"
)

// PeakRSS is the process's peak resident set size in bytes so far (getrusage's ru_maxrss:
// KiB on Linux and most Unixes, bytes on macOS), 0 if it cannot be read.
func PeakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
