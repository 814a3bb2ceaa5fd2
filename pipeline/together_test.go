package pipeline

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/manifest"
)

// togetherStages are fakeStages whose train stages take a while, count how many run at
// once (the most in *peak), and fail for the run named fail.
func togetherStages(peak *int64, fail string) map[string]StageFunc {
	var running atomic.Int64
	var mu sync.Mutex
	stages := fakeStages(map[string]int{})
	for kind, fn := range stages {
		stages[kind] = func(ctx context.Context, sc *StageContext) (Outputs, error) {
			if kind == manifest.KindTrain {
				n := running.Add(1)
				defer running.Add(-1)
				mu.Lock()
				*peak = max(*peak, n)
				mu.Unlock()
				d := 30 * time.Millisecond
				if sc.Node.Name == fail {
					d = 300 * time.Millisecond // the runs beside it finish first
				}
				select {
				case <-time.After(d):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				if sc.Node.Name == fail {
					return nil, errors.New("this run fails")
				}
			}
			mu.Lock() // fakeStages counts runs in a plain map
			defer mu.Unlock()
			return fn(ctx, sc)
		}
	}
	return stages
}

// TestTogetherMatchesOneAtATime runs a sweep of 8 runs with up to 4 stages at a time and
// checks the results are those of one at a time (same stages, in plan order, with the same
// outputs), that stages did overlap but never more than 4, and that every evaluation read
// its train stage's output.
func TestTogetherMatchesOneAtATime(t *testing.T) {
	g := syntheticGraph(t, "name: tog\nseeds: [0, 1, 2, 3]\ndataset: {name: synthetic}\nmodel: {arch: logreg}\nmethods: [{name: fedavg}, {name: local}]\n")
	run := func(together int) ([]StageResult, int64) {
		st := openTestStore(t)
		plan, err := Plan(g, st, &LogCapture{})
		if err != nil {
			t.Fatal(err)
		}
		var peak int64
		e := &Executor{Store: st, Stages: togetherStages(&peak, ""), Progress: Quiet{}, Together: together}
		res, err := e.Execute(context.Background(), g, plan)
		if err != nil {
			t.Fatal(err)
		}
		return res, peak
	}
	one, peak1 := run(0)
	four, peak4 := run(4)
	if peak1 != 1 || peak4 < 2 || peak4 > 4 {
		t.Errorf("train stages at once: %d one at a time (want 1), %d together (want 2 to 4)", peak1, peak4)
	}
	if len(one) != len(g.Nodes) || len(four) != len(one) {
		t.Fatalf("%d and %d results for %d stages", len(one), len(four), len(g.Nodes))
	}
	for i := range one {
		a, b := one[i], four[i]
		if a.Name != b.Name || a.Key != b.Key || a.State != StateRan || b.State != StateRan || len(a.Outputs) != len(b.Outputs) {
			t.Fatalf("result %d: %s %s against %s %s", i, a.Name, a.State, b.Name, b.State)
		}
		for k, d := range a.Outputs {
			if b.Outputs[k] != d {
				t.Errorf("%s: output %s differs together", a.Name, k)
			}
		}
	}
}

// TestTogetherStopsAtTheFirstFailure: a failing train stage fails the run with its own
// error (not the cancellation it causes the others), stages that need it never start, and
// a rerun one at a time finds what did finish cached.
func TestTogetherStopsAtTheFirstFailure(t *testing.T) {
	g := syntheticGraph(t, "name: tog\nseeds: [0, 1, 2, 3]\ndataset: {name: synthetic}\nmodel: {arch: logreg}\nmethods: [{name: fedavg}]\n")
	st := openTestStore(t)
	plan, err := Plan(g, st, &LogCapture{})
	if err != nil {
		t.Fatal(err)
	}
	var peak int64
	e := &Executor{Store: st, Stages: togetherStages(&peak, "train fedavg seed=1"), Progress: Quiet{}, Together: 2}
	res, err := e.Execute(context.Background(), g, plan)
	if err == nil || !strings.Contains(err.Error(), "this run fails") || !strings.Contains(err.Error(), "train fedavg seed=1") {
		t.Fatalf("error %v, want the failing stage's", err)
	}
	for _, r := range res {
		if r.Name == "train fedavg seed=1" || r.Name == "evaluate fedavg seed=1" {
			t.Errorf("%s reported as %s", r.Name, r.State)
		}
	}
	plan, err = Plan(g, st, &LogCapture{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plan {
		if (p.Node.Name == "evaluate fedavg seed=1") && p.State == StateCached {
			t.Errorf("%s cached after its input failed", p.Node.Name)
		}
		if p.Node.Name == "train fedavg seed=0" && p.State != StateCached {
			t.Errorf("%s, which finished before the failure, is not cached", p.Node.Name)
		}
	}
}
