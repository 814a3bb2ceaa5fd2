package artifacts

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// releaseMapped finds the mappings of files under dir in /proc/self/maps and advises
// MADV_DONTNEED on each: for a shared file mapping this only unmaps the pages from the
// process (dirty ones are marked for write-back first), so the data is intact and a later
// access refaults it from the page cache. It is safe while other goroutines read or write
// the mapping.
func releaseMapped(dir string) int64 {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return 0
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0
	}
	defer f.Close()
	var total int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		start, end, path, ok := parseMapsLine(sc.Text())
		if !ok || filepath.Dir(path) != abs {
			continue
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, start, end-start, syscall.MADV_DONTNEED); errno == 0 {
			total += int64(end - start)
		}
	}
	return total
}

// parseMapsLine reads the address range and path of one /proc/self/maps line
// ("start-end perms offset dev inode path"); ok is false for anonymous mappings.
func parseMapsLine(line string) (start, end uintptr, path string, ok bool) {
	fields := strings.Fields(line)
	if len(fields) < 6 || !strings.HasPrefix(fields[5], "/") {
		return 0, 0, "", false
	}
	lo, hi, found := strings.Cut(fields[0], "-")
	if !found {
		return 0, 0, "", false
	}
	a, err1 := strconv.ParseUint(lo, 16, 64)
	b, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || b <= a {
		return 0, 0, "", false
	}
	return uintptr(a), uintptr(b), strings.Join(fields[5:], " "), true
}
