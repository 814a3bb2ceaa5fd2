package remote

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote/backend"
)

// Of several workers claiming one stage at once, exactly one gets it.
func TestLeaseConditionalCreateHasOneWinner(t *testing.T) {
	eachBackend(t, testLeaseConditionalCreateHasOneWinner)
}

func testLeaseConditionalCreateHasOneWinner(t *testing.T, s place) {
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

func testLeaseHeartbeatKeepsItAndReleaseFreesIt(t *testing.T, s place) {
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

func testLeaseExpiresAndIsTakenOver(t *testing.T, s place) {
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
	eachBackend(t, func(t *testing.T, s place) {
		r, _ := s.open(t, Options{})
		ctx := context.Background()
		name := r.object("lease/x/0000000000")
		if ok, err := r.objs.Create(ctx, name, []byte("a"), "application/json"); err != nil || !ok {
			t.Fatalf("first conditional create: %v %v", ok, err)
		}
		if ok, err := r.objs.Create(ctx, name, []byte("b"), "application/json"); err != nil || ok {
			t.Fatalf("second conditional create: %v %v, want refused", ok, err)
		}
		if b, found, err := r.get(ctx, name); err != nil || !found || string(b) != "a" {
			t.Fatalf("after a refused create the object holds %q (%v %v), want \"a\"", b, found, err)
		}
	})
}

// flaky is a remote's objects that fail every call while down is set, as an S3 server
// that stopped or a shared filesystem that went away would; calls counts the attempts.
type flaky struct {
	backend.Objects
	down  atomic.Bool
	calls atomic.Int64
}

var errUnreachable = errors.New("dial tcp 127.0.0.1:9: connection refused")

func (f *flaky) fail() error {
	f.calls.Add(1)
	if f.down.Load() {
		return errUnreachable
	}
	return nil
}

func (f *flaky) Exists(ctx context.Context, name string) (bool, error) {
	if err := f.fail(); err != nil {
		return false, err
	}
	return f.Objects.Exists(ctx, name)
}

func (f *flaky) Put(ctx context.Context, name string, data []byte, ct string) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Objects.Put(ctx, name, data, ct)
}

// A holder that cannot reach the remote keeps its lease and retries with a growing wait
// (fewer attempts than a heartbeat every TTL/3), saying which remote it cannot reach;
// when the remote answers again the lease is renewed and still held. If meanwhile a
// worker that could reach the remote took the stage over, the first heartbeat that gets
// through reports the lease lost.
func TestLeaseSurvivesAnUnreachableRemote(t *testing.T) {
	eachBackend(t, testLeaseSurvivesAnUnreachableRemote)
}

func testLeaseSurvivesAnUnreachableRemote(t *testing.T, s place) {
	ttl := 900 * time.Millisecond
	r1, logs := s.open(t, Options{Holder: "w1", LeaseTTL: ttl})
	f := &flaky{Objects: r1.objs}
	r1.objs = f
	ctx := context.Background()
	key := artifacts.Sum([]byte("train d"))
	l1, _, err := r1.TryLease(ctx, key)
	if err != nil || l1 == nil {
		t.Fatalf("claim: %v %v", l1, err)
	}
	f.down.Store(true)
	f.calls.Store(0)
	time.Sleep(4 * ttl)
	select {
	case <-l1.Lost():
		t.Fatalf("the lease was given up while the remote was unreachable: %s", logs)
	default:
	}
	// A heartbeat every TTL/3 would have tried 12 times; the backoff (0.3, 0.6, 0.9,
	// 0.9 … s, each drawn from its upper half) at most 8.
	if n := f.calls.Load(); n < 2 || n > 8 {
		t.Errorf("%d heartbeat attempts in 4 TTLs of outage, want 2 to 8", n)
	}
	if msg := logs.String(); !strings.Contains(msg, "remote "+r1.String()+" is unreachable") || !strings.Contains(msg, "connection refused") {
		t.Errorf("the outage is not reported naming the remote and why:\n%s", msg)
	}
	f.down.Store(false)
	deadline := time.Now().Add(4 * ttl)
	for !strings.Contains(logs.String(), "reachable again") {
		if time.Now().After(deadline) {
			t.Fatalf("no heartbeat got through after the remote came back:\n%s", logs)
		}
		time.Sleep(ttl / 10)
	}
	select {
	case <-l1.Lost():
		t.Fatalf("the lease was lost although nobody took it:\n%s", logs)
	default:
	}

	// Cut off again; this time a worker that reaches the remote takes the stage over.
	f.down.Store(true)
	r2, _ := s.open(t, Options{Holder: "w2", LeaseTTL: ttl})
	var l2 *Lease
	for start := time.Now(); l2 == nil; time.Sleep(ttl / 10) {
		if time.Since(start) > 10*ttl {
			t.Fatal("the silent holder's lease was never taken over")
		}
		if l2, _, err = r2.TryLease(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	defer l2.Release(ctx)
	f.down.Store(false)
	select {
	case <-l1.Lost():
	case <-time.After(4 * ttl):
		t.Fatal("back in touch, the old holder never noticed the takeover")
	}
	if !strings.Contains(logs.String(), "w2 took it over while this one could not reach the remote") {
		t.Errorf("the loss does not say why:\n%s", logs)
	}
	l1.Release(ctx)
}
