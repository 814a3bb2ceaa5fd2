// Package memlimit sets Go's soft memory limit from the memory this process may use: its
// memory cgroup's limit (as a Kubernetes pod's resources or SLURM's cgroup plugin set it)
// or a SLURM job step's --mem, so that a worker near its limit collects garbage instead of
// being killed for it.
package memlimit

import (
	"os"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// share is the share of the memory this process may use that Go's collector
// takes as its soft limit: past it, the collector runs as often as it must instead of
// letting the heap grow by gcPercent, so a worker nears its container's or job's limit
// only with that much live data, rather than being killed for garbage it had not yet
// collected. The rest is left for what Go does not count (Badger's mapped files, thread
// stacks).
const share = 0.9

// Apply sets Go's soft memory limit to share of Cap unless $GOMEMLIMIT is set (Go reads
// that itself) or nothing caps this process.
func Apply() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if limit := Cap(os.ReadFile, os.Getenv); limit > 0 {
		debug.SetMemoryLimit(int64(float64(limit) * share))
	}
}

// unlimited is where a cgroup's memory limit stands for "none" (v1 writes 2⁶³ rounded down
// to a page; anything past 2⁶⁰ bytes is taken as no limit).
const unlimited = 1 << 60

// Cap returns the smallest memory limit that applies to this process in bytes, or 0
// if none does: its memory cgroup's (v2 memory.max, v1 memory.limit_in_bytes, as a
// Kubernetes pod's resources.limits.memory or SLURM's cgroup plugin set them) and a SLURM
// job step's --mem ($SLURM_MEM_PER_NODE, or $SLURM_MEM_PER_CPU × $SLURM_CPUS_PER_TASK,
// in MiB). read and env are os.ReadFile and os.Getenv, replaced in tests.
func Cap(read func(string) ([]byte, error), env func(string) string) int64 {
	limit := int64(0)
	take := func(v int64) {
		if v > 0 && v < unlimited && (limit == 0 || v < limit) {
			limit = v
		}
	}
	if raw, err := read("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			// hierarchy-ID:controllers:path; v2's single hierarchy is "0::path".
			parts := strings.SplitN(line, ":", 3)
			if len(parts) != 3 {
				continue
			}
			var root, file string
			switch {
			case parts[0] == "0" && parts[1] == "":
				root, file = "/sys/fs/cgroup", "memory.max"
			case slices.Contains(strings.Split(parts[1], ","), "memory"):
				root, file = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
			default:
				continue
			}
			// Inside a container the cgroup is usually mounted at its own root, so the
			// path /proc names may not exist under the mount: read the root's then.
			for _, dir := range []string{path.Join(root, parts[2]), root} {
				if v, ok := readLimit(read, path.Join(dir, file)); ok {
					take(v)
					break
				}
			}
		}
	}
	mib := func(name string) int64 {
		v, err := strconv.ParseInt(strings.TrimSpace(env(name)), 10, 64)
		if err != nil || v <= 0 || v > unlimited>>20 {
			return 0
		}
		return v
	}
	if v := mib("SLURM_MEM_PER_NODE"); v > 0 {
		take(v << 20)
	} else if per, cpus := mib("SLURM_MEM_PER_CPU"), mib("SLURM_CPUS_PER_TASK"); per > 0 {
		take(per * max(cpus, 1) << 20)
	}
	return limit
}

// readLimit reads a cgroup limit file: a byte count, or "max" (no limit, returned as 0).
func readLimit(read func(string) ([]byte, error), file string) (int64, bool) {
	raw, err := read(file)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(raw))
	if s == "max" {
		return 0, true
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}
