package watch

import (
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/live"
)

// A finished run that continued a cached shorter run shows its total wall time, with the
// parts beside it; a run of one part shows its own.
func TestWallTextTotalsAnExtendedRun(t *testing.T) {
	carried := []live.Point{{Round: 19, Seconds: 39}, {Round: 20, Seconds: 41}}
	got := wallText(31.5, carried)
	want := live.FormatDuration(72500*time.Millisecond) + ": " + live.FormatDuration(41*time.Second) + " for rounds 1–20, " +
		live.FormatDuration(31500*time.Millisecond) + " for the rest"
	if got != want {
		t.Errorf("wallText = %q, want %q", got, want)
	}
	if got := wallText(31.5, nil); got != live.FormatDuration(31500*time.Millisecond) {
		t.Errorf("one part: %q", got)
	}
}
