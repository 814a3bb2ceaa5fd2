package main

import (
	"runtime/debug"
	"testing"
)

// TestSetGCPercent: fedpipe collects at 50% heap growth unless $GOGC says otherwise.
func TestSetGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	setGCPercent()
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GOGC unset: GC percent %d, want %d", got, gcPercent)
	}
	t.Setenv("GOGC", "200")
	setGCPercent()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=200: fedpipe changed the GC percent to %d (the runtime reads $GOGC itself)", got)
	}
}
