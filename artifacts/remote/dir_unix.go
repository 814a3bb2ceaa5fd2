//go:build unix

package remote

import (
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
