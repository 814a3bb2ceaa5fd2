package manifest

// The machine's memory, read from /proc/meminfo, the limits that check against it, and how
// byte counts are printed.

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MachineLimits are DefaultLimits with the memory check on: MemoryBytes is this machine's
// memory (MachineMemory), what the fedpipe command checks manifests against.
func MachineLimits() Limits {
	l := DefaultLimits
	l.MemoryBytes = MachineMemory()
	return l
}

// MachineMemory returns the machine's total memory in bytes from /proc/meminfo, or 0.
func MachineMemory() float64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "MemTotal:"); ok {
			fields := strings.Fields(v)
			if len(fields) > 0 {
				if kb, err := strconv.ParseFloat(fields[0], 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}

// FormatBytes renders a byte count as "1.5 GiB".
func FormatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}
