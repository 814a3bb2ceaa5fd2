package main

import (
	"bytes"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The first SIGTERM cancels the context; a second within signalGrace (a batch system and
// the job script signalling together) is ignored; one after it forces the exit.
func TestInterruptContextTwoSignals(t *testing.T) {
	var stderr bytes.Buffer
	var exits atomic.Int32
	ctx, stop := interruptContextWith(&stderr, func() { exits.Add(1) })
	defer stop()
	self := syscall.Getpid()
	syscall.Kill(self, syscall.SIGTERM)
	syscall.Kill(self, syscall.SIGTERM)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not cancel the context")
	}
	time.Sleep(200 * time.Millisecond)
	if n := exits.Load(); n != 0 {
		t.Fatalf("a second SIGTERM at once forced the exit (%d)", n)
	}
	time.Sleep(signalGrace + 200*time.Millisecond)
	syscall.Kill(self, syscall.SIGINT)
	deadline := time.Now().Add(10 * time.Second)
	for exits.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if exits.Load() != 1 {
		t.Fatal("a signal after the grace period did not force the exit")
	}
	if !bytes.Contains(stderr.Bytes(), []byte("stopping now")) {
		t.Errorf("the forced exit said nothing: %q", stderr.String())
	}
}
