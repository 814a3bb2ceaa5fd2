package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// signalGrace is how long after the first interrupt further ones count as the same: a
// batch system signals every process of a job at once and the job script passes the
// signal on too, so fedpipe may receive two within milliseconds.
const signalGrace = 2 * time.Second

// interruptContext returns a context cancelled by the first SIGINT or SIGTERM, which
// lets the running command stop cleanly (a train stage saves its checkpoint). A further
// signal more than signalGrace later ends the process at once with exitInterrupted
// (whoever sends it has seen the clean stop take too long); one within signalGrace is the
// same interrupt delivered twice and is ignored. stop releases the signals.
func interruptContext(stderr io.Writer) (ctx context.Context, stop func()) {
	return interruptContextWith(stderr, func() { os.Exit(exitInterrupted) })
}

// interruptContextWith is interruptContext with the forced exit given (tests).
func interruptContextWith(stderr io.Writer, exit func()) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		var first time.Time
		for {
			select {
			case <-done:
				return
			case sig := <-ch:
				switch {
				case first.IsZero():
					first = time.Now()
					cancel()
				case time.Since(first) > signalGrace:
					fmt.Fprintf(stderr, "\nfedpipe: %v again: stopping now, without waiting for the clean stop to finish\n", sig)
					exit()
					return
				}
			}
		}
	}()
	var once bool
	return ctx, func() {
		if once {
			return
		}
		once = true
		signal.Stop(ch)
		close(done)
		cancel()
	}
}
