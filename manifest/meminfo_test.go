package manifest

import (
	"os"
	"testing"
)

func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		b    float64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1.5 * (1 << 30), "1.5 GiB"}} {
		if got := FormatBytes(c.b); got != c.want {
			t.Errorf("FormatBytes(%v) = %q, want %q", c.b, got, c.want)
		}
	}
}

func TestMachineMemory(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo")
	}
	m := MachineMemory()
	if m < 1<<20 {
		t.Errorf("MachineMemory() = %v", m)
	}
	if l := MachineLimits(); l.MemoryBytes != m || l.MaxCells != DefaultLimits.MaxCells {
		t.Errorf("MachineLimits() = %+v", l)
	}
}
