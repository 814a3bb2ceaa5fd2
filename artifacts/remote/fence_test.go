package remote

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// Issue 61, item 6: worker A, paused (SIGSTOP) past its lease, resumes after worker B took
// the stage over, finished it and released the lease. A's late writes of the stage — its
// result entry, a checkpoint pointer — are refused, A learns that it lost the lease (to
// B), and B's entry is left as B wrote it. A's pause is a heartbeat too slow to matter
// (TTL 1 h) while B judges leases by a TTL of 300 ms.
func TestFencedWriteOfAPausedHolderIsRefused(t *testing.T) {
	eachBackend(t, testFencedWriteOfAPausedHolderIsRefused)
}

func testFencedWriteOfAPausedHolderIsRefused(t *testing.T, s place) {
	ctx := context.Background()
	rA, logsA := s.open(t, Options{Holder: "hostA/1", LeaseTTL: time.Hour})
	rB, _ := s.open(t, Options{Holder: "hostB/2", LeaseTTL: 300 * time.Millisecond})
	stA, stB := openStore(t), openStore(t)
	key, aA := putAction(t, stA, 1)
	_, aB := putAction(t, stB, 1) // the same bytes: a deterministic stage

	lA, _, err := rA.TryLease(ctx, key)
	if err != nil || lA == nil {
		t.Fatalf("A claims the stage: %v %v", lA, err)
	}
	defer lA.Release(ctx)
	if lA.Generation() != 0 {
		t.Fatalf("first claim has generation %d, want 0", lA.Generation())
	}
	if err := lA.Check(ctx); err != nil {
		t.Fatalf("A holds its fresh lease, yet Check says %v", err)
	}
	// A pushes a checkpoint while it holds the lease: accepted, stamped.
	cpBlob, _ := stA.Put([]byte("checkpoint index"))
	if _, err := lA.PushCheckpoint(ctx, stA, Checkpoint{Round: 2, Index: cpBlob}); err != nil {
		t.Fatalf("A's checkpoint under a live lease: %v", err)
	}

	// A is paused; B sees its lease unchanged for a TTL and takes the stage over.
	var lB *Lease
	for start := time.Now(); lB == nil; time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("B never took the stage over")
		}
		if lB, _, err = rB.TryLease(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	if lB.Generation() != 1 {
		t.Fatalf("takeover has generation %d, want 1", lB.Generation())
	}
	// While B runs, A's late checkpoint is refused.
	if _, err := lA.PushCheckpoint(ctx, stA, Checkpoint{Round: 4, Index: cpBlob}); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("A's checkpoint after the takeover: %v, want ErrLeaseLost", err)
	}
	if _, err := lB.PushAction(ctx, stB, aB); err != nil {
		t.Fatalf("B pushes its result: %v", err)
	}
	if err := lB.Release(ctx); err != nil {
		t.Fatal(err)
	}
	entry := s.objectPath("ac/" + key.String())
	before, err := os.ReadFile(entry)
	if err != nil && s.address[:2] != "s3" {
		t.Fatal(err)
	}

	// A resumes (SIGCONT) and tries to write its result: refused, naming B.
	_, err = lA.PushAction(ctx, stA, aA)
	var lost *LostError
	if !errors.As(err, &lost) || lost.To != "hostB/2" {
		t.Fatalf("A's late result: %v, want a LostError naming hostB/2", err)
	}
	if want := "lost the lease of " + key.Short() + " to hostB/2; not writing"; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
	select {
	case <-lA.Lost():
	default:
		t.Error("Lost is not closed after a refused write")
	}
	if !strings.Contains(logsA.String(), "lost the lease of "+key.Short()+" to hostB/2") {
		t.Errorf("A's log does not say it lost the lease to B:\n%s", logsA)
	}

	// The remote logic refuses it too, without A's Check: B's stamp is a later generation.
	fresh := &Lease{r: rA, key: key, gen: lA.gen, lost: make(chan struct{})}
	if _, err := rA.pushAction(ctx, stA, key, aA, fresh); !errors.As(err, &lost) || lost.To != "hostB/2" {
		t.Fatalf("a write stamped with generation 0 over generation 1's entry: %v, want refused", err)
	}
	if before != nil {
		after, _ := os.ReadFile(entry)
		if !bytes.Equal(before, after) {
			t.Errorf("B's entry was rewritten:\n%s\nnow\n%s", before, after)
		}
	}
	rec, ok, err := rA.readAction(ctx, key)
	if err != nil || !ok || rec.Lease == nil || rec.Lease.Holder != "hostB/2" || rec.Lease.Gen != 1 {
		t.Errorf("the entry's lease: %+v (%v %v), want B's generation 1", rec.Lease, ok, err)
	}
	// The entry still reads as a result.
	st := openStore(t)
	if _, ok, _, err := rA.FetchAction(ctx, st, key); err != nil || !ok {
		t.Errorf("fetch B's entry: %v %v", ok, err)
	}
}
