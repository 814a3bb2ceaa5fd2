package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/artifacts/remote/s3test"
	"github.com/fedpipe/fedpipe/manifest"
)

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		in   string
		i, n int
		ok   bool
	}{
		{"0/1", 0, 1, true}, {"3/4", 3, 4, true}, {"4/4", 0, 0, false}, {"-1/4", 0, 0, false},
		{"1/0", 0, 0, false}, {"1", 0, 0, false}, {"a/b", 0, 0, false}, {"", 0, 0, false},
	} {
		i, n, err := ParseShard(c.in)
		if (err == nil) != c.ok || i != c.i || n != c.n {
			t.Errorf("ParseShard(%q) = %d, %d, %v", c.in, i, n, err)
		}
	}
}

// Train stages are dealt to shards round-robin in plan order; each evaluate stage follows
// its train stage; partitions and the report belong to no shard.
func TestShardOwnersFollowTrainStages(t *testing.T) {
	g := syntheticGraph(t, "name: s\nseeds: [0, 1]\ndataset: {name: synthetic}\nmodel: {arch: logreg}\nmethods: [{name: fedavg}, {name: local}, {name: fedprox}]\n")
	plan := make([]PlanEntry, len(g.Nodes))
	for i, n := range g.Nodes {
		plan[i] = PlanEntry{Node: n, State: StateRun}
	}
	owner := shardOwners(plan, 4)
	perShard := map[int]int{}
	trains := 0
	for _, p := range plan {
		n := p.Node
		o, ok := owner[n]
		switch n.Kind {
		case manifest.KindTrain:
			if !ok || o != trains%4 {
				t.Errorf("%s: shard %d (%v), want %d", n.Name, o, ok, trains%4)
			}
			perShard[o]++
			trains++
		case manifest.KindEvaluate:
			if to, tok := owner[n.Input(manifest.KindTrain)]; !ok || !tok || o != to {
				t.Errorf("%s: shard %d, its train stage's %d", n.Name, o, to)
			}
		default:
			if ok {
				t.Errorf("%s (%s) belongs to shard %d, want none", n.Name, n.Kind, o)
			}
		}
	}
	if trains != 6 || perShard[0] != 2 || perShard[1] != 2 || perShard[2] != 1 || perShard[3] != 1 {
		t.Errorf("%d train stages dealt %v", trains, perShard)
	}
	if leased(plan[0].Node) || !leased(g.Nodes[1]) {
		t.Errorf("partitions are leased, or train stages are not")
	}
}

// A split run needs a remote.
func TestSplitWithoutRemoteFails(t *testing.T) {
	e := &Executor{Split: &Split{Worker: true}}
	_, err := e.Execute(context.Background(), &Graph{}, nil)
	if err == nil || !strings.Contains(err.Error(), "need a remote") {
		t.Fatalf("err = %v", err)
	}
}

// A worker waiting for stages other workers hold looks again after 1, 2, 4, 8, 8 … s
// (Poll 1 s, MaxPoll 8 s, each drawn from the upper half), not every second; when it
// fetches a result the others finished and then waits for another holder's stage, it
// starts again from Poll. The waits are counted, not slept.
func TestWaitingWorkerBacksOff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := partialGraph(t)
	dir := t.TempDir()
	open := func(holder string) *remote.Remote {
		r, err := remote.Open(ctx, dir, remote.Options{Holder: holder, LeaseTTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	train, eval := nodeOf(t, g, manifest.KindTrain), nodeOf(t, g, manifest.KindEvaluate)
	other := openTestStore(t)
	runPlan(t, g, other, nil, map[string]int{})
	trained, ok, err := other.GetAction(artifacts.Digest(train.Key))
	if err != nil || !ok {
		t.Fatalf("the other worker's train result: %v %v", ok, err)
	}
	r1, r2 := open("w1"), open("w2")
	held, _, err := r1.TryLease(ctx, artifacts.Digest(train.Key))
	if err != nil || held == nil {
		t.Fatalf("w1 claims the train stage: %v %v", held, err)
	}

	var waits []time.Duration
	sp := &Split{Worker: true, Poll: time.Second, MaxPoll: 8 * time.Second}
	sp.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		switch len(waits) {
		case 6: // w1 finishes the train stage; w2 claims the evaluation
			if _, err := r1.PushAction(ctx, other, artifacts.Digest(train.Key), trained); err != nil {
				t.Fatal(err)
			}
			held.Release(ctx)
			l, _, err := r2.TryLease(ctx, artifacts.Digest(eval.Key))
			if err != nil || l == nil {
				t.Fatalf("w2 claims the evaluation: %v %v", l, err)
			}
			t.Cleanup(func() { l.Release(context.Background()) })
		case 12:
			cancel()
		}
		return ctx.Err()
	}
	st := openTestStore(t)
	plan, err := Plan(g, st, &LogCapture{})
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]int{}
	e := &Executor{Store: st, Stages: fakeStages(ran), Progress: Quiet{}, Remote: open("me"), Split: sp}
	if _, err := e.Execute(ctx, g, plan); !errors.Is(err, context.Canceled) {
		t.Fatalf("Execute: %v, want it cancelled while waiting", err)
	}
	s := time.Second
	want := []time.Duration{s, 2 * s, 4 * s, 8 * s, 8 * s, 8 * s, s, 2 * s, 4 * s, 8 * s, 8 * s, 8 * s}
	if len(waits) != len(want) {
		t.Fatalf("waited %d times (%v), want %d", len(waits), waits, len(want))
	}
	for i, d := range waits {
		if d < want[i]/2 || d > want[i] {
			t.Errorf("wait %d: %v, want between %v and %v (all: %v)", i+1, d, want[i]/2, want[i], waits)
		}
	}
	if ran[manifest.KindTrain] != 0 || ran[manifest.KindEvaluate] != 0 {
		t.Errorf("the waiting worker ran %v; the others hold those stages", ran)
	}
}

// logProgress is Quiet but keeps the log lines.
type logProgress struct {
	Quiet
	LogCapture
}

func (p *logProgress) Logf(format string, args ...any) { p.LogCapture.Logf(format, args...) }

// A worker whose remote cannot take a finished stage's result keeps it and retries the
// push with backoff (counted, not slept) until the remote takes it; with no time left to
// retry, the run fails naming the remote.
func TestWorkerRetriesAFailedPush(t *testing.T) {
	ctx := context.Background()
	g := partialGraph(t)
	dir := t.TempDir()
	r, err := remote.Open(ctx, dir, remote.Options{Holder: "me", LeaseTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	// A file where the blobs' folder should be: every upload fails, as on a filesystem
	// that went away.
	block := filepath.Join(dir, "cas")
	if err := os.WriteFile(block, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waits := 0
	sp := &Split{Worker: true, Poll: time.Second}
	sp.sleep = func(ctx context.Context, d time.Duration) error {
		if waits++; waits == 3 {
			os.Remove(block) // the remote is back
		}
		return nil
	}
	lines := executeWorker(ctx, t, g, r, sp)
	if waits != 3 || !strings.Contains(lines, "could not push its result") || !strings.Contains(lines, "after retrying") {
		t.Errorf("%d waits, want 3; log:\n%s", waits, lines)
	}
	for _, n := range g.Nodes {
		if ok, err := r.HasAction(ctx, artifacts.Digest(n.Key)); err != nil || !ok {
			t.Errorf("%s is not in the remote after the retried push: %v", n.Name, err)
		}
	}

	// No time left to retry: the run fails, naming the remote.
	dir2 := t.TempDir()
	r2, err := remote.Open(ctx, dir2, remote.Options{Holder: "me", LeaseTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir2, "cas"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sp.RetryFor = time.Nanosecond
	st2 := openTestStore(t)
	plan, _ := Plan(g, st2, &LogCapture{})
	e := &Executor{Store: st2, Stages: fakeStages(map[string]int{}), Progress: Quiet{}, Remote: r2, Split: sp}
	if _, err := e.Execute(ctx, g, plan); err == nil || !strings.Contains(err.Error(), "pushing the result to the remote") || !strings.Contains(err.Error(), r2.String()) {
		t.Errorf("Execute with the remote gone: %v; want a push failure naming %s", err, r2)
	}
}

// A worker whose S3 server goes away waits for it with backoff (the waits counted, not
// slept), saying so once, and carries on when it is back; one that has waited RetryFor
// gives up, naming the remote.
func TestWorkerWaitsForAnUnreachableRemote(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t, "fedpipe")
	open := func() *remote.Remote {
		r, err := remote.Open(ctx, "s3://fedpipe/sweep", remote.Options{Env: srv.Getenv, LeaseTTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	g := partialGraph(t)
	r := open()
	srv.Stop()
	var waits []time.Duration
	sp := &Split{Worker: true, Poll: time.Second, MaxPoll: 4 * time.Second}
	sp.sleep = func(ctx context.Context, d time.Duration) error {
		if waits = append(waits, d); len(waits) == 4 {
			srv.Restart(t)
		}
		return nil
	}
	lines := executeWorker(ctx, t, g, r, sp)
	if len(waits) != 4 || strings.Count(lines, "cannot reach the remote") != 1 || !strings.Contains(lines, "answers again") ||
		!strings.Contains(lines, r.String()) {
		t.Errorf("waits %v; log:\n%s", waits, lines)
	}
	for i, hi := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		if waits[i] > hi || waits[i] < hi/2 {
			t.Errorf("wait %d: %v, want between %v and %v", i+1, waits[i], hi/2, hi)
		}
	}
	for _, n := range g.Nodes {
		if ok, err := r.HasAction(ctx, artifacts.Digest(n.Key)); err != nil || !ok {
			t.Errorf("%s is not in the remote: %v", n.Name, err)
		}
	}

	srv.Stop()
	sp.RetryFor = time.Millisecond
	sp.sleep = func(context.Context, time.Duration) error { time.Sleep(time.Millisecond); return nil }
	st2 := openTestStore(t)
	plan, _ := Plan(g, st2, &LogCapture{})
	e := &Executor{Store: st2, Stages: fakeStages(map[string]int{}), Progress: Quiet{}, Remote: r, Split: sp}
	if _, err := e.Execute(ctx, g, plan); err == nil || !strings.Contains(err.Error(), r.String()) {
		t.Errorf("Execute with the remote gone for good: %v; want an error naming %s", err, r)
	}
}

// executeWorker plans g on a fresh store and executes it with the remote r and split sp,
// returning the progress log.
func executeWorker(ctx context.Context, t *testing.T, g *Graph, r *remote.Remote, sp *Split) string {
	t.Helper()
	st := openTestStore(t)
	plan, err := Plan(g, st, &LogCapture{})
	if err != nil {
		t.Fatal(err)
	}
	logs := &logProgress{}
	e := &Executor{Store: st, Stages: fakeStages(map[string]int{}), Progress: logs, Remote: r, Split: sp}
	if _, err := e.Execute(ctx, g, plan); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return strings.Join(logs.Take(), "\n")
}
