package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/manifest"
)

// Issue 61, item 6: worker A is paused (SIGSTOP) while it trains, past its lease; worker B
// takes the stage over, finishes it and releases the lease; A resumes (SIGCONT) and its
// stage returns. A must not write the remote's entry (B's stays, byte for byte), must say
// "lost the lease of STAGE to HOST; not writing", and must report the stage as fetched
// from the remote, not as ran. The pause is a hook inside A's train stage that blocks
// until B is done; A's heartbeat (TTL 1 h) is too slow to notice meanwhile, as a stopped
// process's is.
func TestPausedWorkerDropsItsLateResult(t *testing.T) {
	ctx := context.Background()
	g := partialGraph(t)
	dir := t.TempDir()
	train := nodeOf(t, g, manifest.KindTrain)
	key := artifacts.Digest(train.Key)
	rA, err := remote.Open(ctx, dir, remote.Options{Holder: "hostA/1", LeaseTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rB, err := remote.Open(ctx, dir, remote.Options{Holder: "hostB/2", LeaseTTL: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// B's result of the train stage, computed in B's own store.
	stB := openTestStore(t)
	runPlan(t, g, stB, nil, map[string]int{})
	trainedB, ok, err := stB.GetAction(key)
	if err != nil || !ok {
		t.Fatalf("B's train result: %v %v", ok, err)
	}
	entry := filepath.Join(dir, "ac", key.String())
	var written []byte

	ran := map[string]int{}
	stages := fakeStages(ran)
	trainA := stages[manifest.KindTrain]
	stages[manifest.KindTrain] = func(ctx context.Context, sc *StageContext) (Outputs, error) {
		// A is stopped here: B takes over once A's lease looks dead to it.
		var lB *remote.Lease
		for start := time.Now(); lB == nil; time.Sleep(50 * time.Millisecond) {
			if time.Since(start) > 10*time.Second {
				t.Fatal("B never took the stage over")
			}
			if lB, _, err = rB.TryLease(ctx, key); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := lB.PushAction(ctx, stB, trainedB); err != nil {
			t.Fatalf("B pushes its result: %v", err)
		}
		if err := lB.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if written, err = os.ReadFile(entry); err != nil {
			t.Fatal(err)
		}
		return trainA(ctx, sc) // A resumes and finishes
	}
	stA := openTestStore(t)
	plan, err := Plan(g, stA, &LogCapture{})
	if err != nil {
		t.Fatal(err)
	}
	logs := &logProgress{}
	e := &Executor{Store: stA, Stages: stages, Progress: logs, Remote: rA, Split: &Split{Worker: true, Poll: 10 * time.Millisecond}}
	res, err := e.Execute(ctx, g, plan)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	lines := strings.Join(logs.Take(), "\n")
	if want := "lost the lease of " + train.Name + " to hostB/2; not writing"; !strings.Contains(lines, want) {
		t.Errorf("A's log does not say %q:\n%s", want, lines)
	}
	after, err := os.ReadFile(entry)
	if err != nil || !bytes.Equal(after, written) {
		t.Errorf("the remote's entry was rewritten after B finished (%v):\nB wrote %s\nnow     %s", err, written, after)
	}
	for _, r := range res {
		if r.Kind == manifest.KindTrain && (r.State != StateCached || r.Reason != ReasonFetched) {
			t.Errorf("A reports the train stage %s (%s), want it fetched from the remote", r.State, r.Reason)
		}
	}
}
