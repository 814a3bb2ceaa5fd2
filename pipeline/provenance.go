package pipeline

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
)

// BuildInfo describes the fedpipe binary that runs stages, for the provenance recorded with
// every result (Executor.Build).
type BuildInfo struct {
	// Version is fedpipe's release and Commit the git commit it was built from ("" when
	// the build has no stamp).
	Version, Commit string
	// Backend is the numeric backend's id (model.BackendID), which also names the GPU's
	// plugin on XLA.
	Backend string
}

// Provenance says where and how a stage's result was computed. It is recorded in the
// result's action entry (artifacts.Action.Meta), so it travels with pushes and pulls, and
// it is not part of the stage's key: the same result computed elsewhere keeps the first
// provenance it was stored with. Fields an older result did not record are empty.
type Provenance struct {
	Version string `json:"fedpipe_version,omitempty" arrow:"fedpipe_version"`
	Commit  string `json:"commit,omitempty" arrow:"commit"`
	Backend string `json:"backend,omitempty" arrow:"backend"`
	// CPU is the processor's model name (/proc/cpuinfo), or the architecture where that
	// cannot be read.
	CPU string `json:"cpu,omitempty" arrow:"cpu"`
	// Threads is GOMAXPROCS, the goroutines the CPU backends and the client pool use.
	Threads int `json:"threads,omitempty" arrow:"threads"`
	// Seconds is the stage's wall time: for a stage that ran in several processes (Segments),
	// the total over them wherever it is read or shown (ProvenanceOf, run --json), each
	// part's in its segment; the action's "seconds" meta records the last process's alone.
	Seconds float64 `json:"wall_seconds,omitempty" arrow:"wall_seconds"`
	// PeakRSS is the process's peak resident memory in bytes when the stage ended: the
	// peak of the whole process so far (every stage it ran before included), not of the
	// stage alone.
	PeakRSS int64 `json:"peak_rss_bytes,omitempty" arrow:"peak_rss_bytes"`
	// Date is when the stage ended, UTC, RFC 3339.
	Date string `json:"date,omitempty" arrow:"date"`
	// Segments, for a train stage that ran in more than one process (resumed from a
	// checkpoint, perhaps one another machine pushed, or continued from a shorter cached
	// run), says which rounds each ran and where; the fields above are the last one's.
	// Empty when one process ran it all.
	Segments []Segment `json:"segments,omitempty" arrow:"-"`
}

// Meta keys of the provenance in an action entry ("seconds" and "created" predate it).
const (
	metaVersion = "fedpipe_version"
	metaCommit  = "commit"
	metaBackend = "backend"
	metaCPU     = "cpu"
	metaThreads = "threads"
	metaSeconds = "seconds"
	metaPeakRSS = "peak_rss_bytes"
	metaCreated = "created"
)

// provenance is the provenance of a stage that ran for wall and ended now.
func (b BuildInfo) provenance(wall time.Duration) Provenance {
	return Provenance{Version: b.Version, Commit: b.Commit, Backend: b.Backend, CPU: CPUModel(),
		Threads: runtime.GOMAXPROCS(0), Seconds: wall.Seconds(), PeakRSS: PeakRSS(),
		Date: time.Now().UTC().Format(time.RFC3339)}
}

// putMeta records p in an action's meta.
func (p Provenance) putMeta(m map[string]string) {
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set(metaVersion, p.Version)
	set(metaCommit, p.Commit)
	set(metaBackend, p.Backend)
	set(metaCPU, p.CPU)
	if p.Threads > 0 {
		m[metaThreads] = strconv.Itoa(p.Threads)
	}
	m[metaSeconds] = fmt.Sprintf("%.3f", p.Seconds)
	if p.PeakRSS > 0 {
		m[metaPeakRSS] = strconv.FormatInt(p.PeakRSS, 10)
	}
	set(metaCreated, p.Date)
	if len(p.Segments) > 0 {
		m[metaSegments] = encodeSegments(p.Segments)
	}
}

// ProvenanceOf reads the provenance recorded in an action's meta; ok is false when it
// records none (not even the wall time and date every result has carried).
func ProvenanceOf(a artifacts.Action) (p Provenance, ok bool) {
	m := a.Meta
	p = Provenance{Version: m[metaVersion], Commit: m[metaCommit], Backend: m[metaBackend], CPU: m[metaCPU], Date: m[metaCreated]}
	p.Threads, _ = strconv.Atoi(m[metaThreads])
	p.Seconds, _ = strconv.ParseFloat(m[metaSeconds], 64)
	p.PeakRSS, _ = strconv.ParseInt(m[metaPeakRSS], 10, 64)
	p.Segments = decodeSegments(m[metaSegments])
	p.Seconds = p.TotalSeconds()
	return p, !reflect.ValueOf(p).IsZero()
}

// TotalSeconds is the wall time over every segment of a stage that ran in several
// processes (a segment of rounds whose provenance was not recorded counts none), else
// Seconds.
func (p Provenance) TotalSeconds() float64 {
	if len(p.Segments) == 0 {
		return p.Seconds
	}
	total := 0.0
	for _, s := range p.Segments {
		total += s.Seconds
	}
	return total
}

// WallParts is the wall time of each segment, in seconds to one decimal, joined by " + "
// ("41.0 + 31.5"); "" for a stage that ran in one process.
func (p Provenance) WallParts() string {
	if len(p.Segments) < 2 {
		return ""
	}
	parts := make([]string, len(p.Segments))
	for i, s := range p.Segments {
		parts[i] = strconv.FormatFloat(s.Seconds, 'f', 1, 64)
	}
	return strings.Join(parts, " + ")
}

// StageProvenance reads the provenance recorded with node n's result in store; ok is false
// when there is no result or it records none. It reads the action entry only, not the
// outputs (artifacts.Store.ActionMeta): whether the result is intact is GetAction's
// business.
func StageProvenance(store *artifacts.Store, n *Node) (Provenance, bool, error) {
	m, ok, err := store.ActionMeta(artifacts.Digest(n.Key))
	if err != nil || !ok {
		return Provenance{}, false, err
	}
	p, ok := ProvenanceOf(artifacts.Action{Meta: m})
	return p, ok, nil
}

// TrainOf returns the train stage a node's result derives from (n itself for a train
// stage; the first train stage among its inputs, transitively, otherwise), nil if none.
func TrainOf(n *Node) *Node {
	if n.Kind == manifest.KindTrain {
		return n
	}
	for _, in := range n.Inputs {
		if t := TrainOf(in); t != nil {
			return t
		}
	}
	return nil
}

var cpuModel = sync.OnceValue(func() string {
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
})

// CPUModel is the machine's processor model name as /proc/cpuinfo gives it, or the
// architecture (runtime.GOARCH) where it cannot be read.
func CPUModel() string { return cpuModel() }

// ShortCommit is the commit cut to its first 12 characters, as tables show it.
func (p Provenance) ShortCommit() string { return p.Commit[:min(len(p.Commit), 12)] }

// ThreadsText is Threads as text, "" when not recorded.
func (p Provenance) ThreadsText() string {
	if p.Threads <= 0 {
		return ""
	}
	return strconv.Itoa(p.Threads)
}

// PeakRSSMiB is the peak RSS in whole MiB as text, "" when not recorded.
func (p Provenance) PeakRSSMiB() string {
	if p.PeakRSS <= 0 {
		return ""
	}
	return fmt.Sprintf("%.0f", float64(p.PeakRSS)/(1<<20))
}
