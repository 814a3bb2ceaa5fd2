package remote

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
)

// Of several workers claiming one stage at once, exactly one gets it.
func TestLeaseConditionalCreateHasOneWinner(t *testing.T) {
	eachBackend(t, testLeaseConditionalCreateHasOneWinner)
}

func testLeaseConditionalCreateHasOneWinner(t *testing.T, s backend) {
	key := artifacts.Sum([]byte("train a"))
	const n = 6
	var wg sync.WaitGroup
	leases := make([]*Lease, n)
	for i := range n {
		r, _ := s.open(t, Options{Holder: string(rune('A' + i))})
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, _, err := r.TryLease(context.Background(), key)
			if err != nil {
				t.Error(err)
			}
			leases[i] = l
		}()
	}
	wg.Wait()
	won := 0
	for _, l := range leases {
		if l != nil {
			won++
			if l.TookOver() != "" {
				t.Errorf("a fresh claim says it took over %q", l.TookOver())
			}
			defer l.Release(context.Background())
		}
	}
	if won != 1 {
		t.Fatalf("%d workers hold the lease, want 1", won)
	}
}

// A live holder's heartbeat keeps its lease: another worker watching for several TTLs
// never takes it over, and learns who holds it. Released, it can be claimed at once.
func TestLeaseHeartbeatKeepsItAndReleaseFreesIt(t *testing.T) {
	eachBackend(t, testLeaseHeartbeatKeepsItAndReleaseFreesIt)
}

func testLeaseHeartbeatKeepsItAndReleaseFreesIt(t *testing.T, s backend) {
	ttl := 1500 * time.Millisecond // heartbeats every 0.5 s: enough slack on a loaded machine
	r1, _ := s.open(t, Options{Holder: "w1", LeaseTTL: ttl})
	r2, _ := s.open(t, Options{Holder: "w2", LeaseTTL: ttl})
	ctx := context.Background()
	key := artifacts.Sum([]byte("train b"))
	l1, _, err := r1.TryLease(ctx, key)
	if err != nil || l1 == nil {
		t.Fatalf("first claim: %v %v", l1, err)
	}
	for end := time.Now().Add(3 * ttl); time.Now().Before(end); time.Sleep(ttl / 10) {
		l2, holder, err := r2.TryLease(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if l2 != nil {
			t.Fatal("a live lease was taken over")
		}
		if holder != "w1" {
			t.Fatalf("holder = %q, want w1", holder)
		}
	}
	select {
	case <-l1.Lost():
		t.Fatal("the holder thinks it lost a lease nobody took")
	default:
	}
	if err := l1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l2, _, err := r2.TryLease(ctx, key)
	if err != nil || l2 == nil {
		t.Fatalf("claim after release: %v %v", l2, err)
	}
	l2.Release(ctx)
}

// A holder that stops beating (killed) loses the lease after one TTL of silence as seen
// by another worker, who takes it over; if the old holder comes back, its heartbeat sees
// the later generation and reports the lease lost.
func TestLeaseExpiresAndIsTakenOver(t *testing.T) { eachBackend(t, testLeaseExpiresAndIsTakenOver) }

func testLeaseExpiresAndIsTakenOver(t *testing.T, s backend) {
	ttl := 600 * time.Millisecond
	r1, _ := s.open(t, Options{Holder: "w1", LeaseTTL: ttl})
	r2, logs := s.open(t, Options{Holder: "w2", LeaseTTL: ttl})
	ctx := context.Background()
	key := artifacts.Sum([]byte("train c"))
	l1, _, err := r1.TryLease(ctx, key)
	if err != nil || l1 == nil {
		t.Fatalf("first claim: %v %v", l1, err)
	}
	// Freeze w1: stop its heartbeat without releasing, as a SIGSTOP or kill -9 would.
	close(l1.stop)
	<-l1.done

	start := time.Now()
	var l2 *Lease
	for l2 == nil {
		if time.Since(start) > 10*ttl {
			t.Fatal("the dead holder's lease was never taken over")
		}
		time.Sleep(ttl / 10)
		if l2, _, err = r2.TryLease(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	if waited := time.Since(start); waited < ttl {
		t.Fatalf("taken over after %v, before a whole TTL (%v) of silence", waited, ttl)
	}
	if l2.TookOver() != "w1" {
		t.Fatalf("TookOver = %q, want w1", l2.TookOver())
	}
	if !strings.Contains(logs.String(), "taking it over") {
		t.Fatalf("takeover not logged: %q", logs)
	}

	// w1 wakes up: a heartbeat of its (restarted) lease notices generation 1.
	l1.stop, l1.done = make(chan struct{}), make(chan struct{})
	go l1.heartbeat()
	select {
	case <-l1.Lost():
	case <-time.After(5 * ttl):
		t.Fatal("the old holder never noticed it lost the lease")
	}
	if err := l1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// The lost holder's release left the new holder's claim alone.
	if _, holder, _ := r1.TryLease(ctx, key); holder != "w2" {
		t.Fatalf("after the old holder's release the holder is %q, want w2", holder)
	}
	l2.Release(ctx)
}

// A conditional create of an existing name fails, and leaves the first object as it was
// (S3: the server honours If-None-Match: * and preconditionFailed recognizes its answer;
// a directory: link(2) refuses an existing name). Leases rely on it.
func TestConditionalCreateRefusesExistingObject(t *testing.T) {
	eachBackend(t, func(t *testing.T, s backend) {
		r, _ := s.open(t, Options{})
		ctx := context.Background()
		name := r.object("lease/x/0000000000")
		if ok, err := r.objs.create(ctx, name, []byte("a"), "application/json"); err != nil || !ok {
			t.Fatalf("first conditional create: %v %v", ok, err)
		}
		if ok, err := r.objs.create(ctx, name, []byte("b"), "application/json"); err != nil || ok {
			t.Fatalf("second conditional create: %v %v, want refused", ok, err)
		}
		if b, found, err := r.get(ctx, name); err != nil || !found || string(b) != "a" {
			t.Fatalf("after a refused create the object holds %q (%v %v), want \"a\"", b, found, err)
		}
	})
}
