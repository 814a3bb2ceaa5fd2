package pipeline

import (
	"runtime/debug"
	"time"
)

// DefaultReleaseAfter is the stage duration past which Executor returns memory to the
// system when the stage ends: a training or shift stage leaves hundreds of megabytes of
// per-client models behind, while a forced collection costs milliseconds.
const DefaultReleaseAfter = time.Second

// releaseMemory collects the heap a stage of duration d left behind and hands the freed
// pages back to the system at once (Go's background scavenger would take minutes), so a
// long sweep's resident memory drops to what is live between stages instead of staying
// at the largest stage's peak.
func (e *Executor) releaseMemory(d time.Duration) {
	after := e.ReleaseAfter
	if after == 0 {
		after = DefaultReleaseAfter
	}
	if after < 0 || d < after {
		return
	}
	debug.FreeOSMemory()
}
