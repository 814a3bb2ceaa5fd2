package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/manifest"
)

// fakeStages stand in for the real ones: train writes a table and a "model", evaluate
// reads the model (as the real evaluation does) and writes a summary. ran counts runs by
// kind.
func fakeStages(ran map[string]int) map[string]StageFunc {
	return map[string]StageFunc{
		manifest.KindPartition: func(_ context.Context, sc *StageContext) (Outputs, error) {
			ran[sc.Node.Kind]++
			return Outputs{"assignment": []byte("table: clients")}, nil
		},
		manifest.KindTrain: func(_ context.Context, sc *StageContext) (Outputs, error) {
			ran[sc.Node.Kind]++
			return Outputs{"metrics": []byte("table: metrics of " + sc.Node.Name), "model/global": []byte("weights of " + sc.Node.Name)}, nil
		},
		manifest.KindEvaluate: func(_ context.Context, sc *StageContext) (Outputs, error) {
			ran[sc.Node.Kind]++
			m, err := sc.Input(manifest.KindTrain, "model/global")
			if err != nil {
				return nil, err
			}
			return Outputs{"summary": append([]byte("table: accuracy of "), m...)}, nil
		},
		manifest.KindReport: func(_ context.Context, sc *StageContext) (Outputs, error) {
			ran[sc.Node.Kind]++
			return Outputs{"report.md": []byte("# report")}, nil
		},
	}
}

func partialGraph(t *testing.T) *Graph {
	t.Helper()
	return syntheticGraph(t, "name: p\nseeds: [0]\ndataset: {name: synthetic}\nmodel: {arch: logreg}\nmethods: [{name: fedavg}]\n")
}

func openTestStore(t *testing.T) *artifacts.Store {
	t.Helper()
	st, err := artifacts.Open(t.TempDir(), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func runPlan(t *testing.T, g *Graph, st *artifacts.Store, r *remote.Remote, ran map[string]int) []StageResult {
	t.Helper()
	plan, err := Plan(g, st, &LogCapture{})
	if err != nil {
		t.Fatal(err)
	}
	e := &Executor{Store: st, Stages: fakeStages(ran), Progress: Quiet{}, Remote: r}
	res, err := e.Execute(context.Background(), g, plan)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func nodeOf(t *testing.T, g *Graph, kind string) *Node {
	for _, n := range g.Nodes {
		if n.Kind == kind {
			return n
		}
	}
	t.Fatalf("no %s stage", kind)
	return nil
}

// A results-only push keeps the train stage's table and leaves its model out. A store
// filled from it holds the train result as partial, and runs nothing while everything
// downstream is cached; once the evaluation must run (its result gone from the remote),
// the train stage is recomputed first — the evaluation never reads a missing model — and
// the recomputed, complete result replaces the partial one locally and in the remote.
func TestResultsOnlyPushServesReadersAndRecomputesForModels(t *testing.T) {
	ctx := context.Background()
	g := partialGraph(t)
	train, eval := nodeOf(t, g, manifest.KindTrain), nodeOf(t, g, manifest.KindEvaluate)
	dir := filepath.Join(t.TempDir(), "remote")
	r, err := remote.Open(ctx, dir, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := openTestStore(t)
	ran := map[string]int{}
	runPlan(t, g, src, nil, ran)
	if ran[manifest.KindTrain] != 1 || ran[manifest.KindEvaluate] != 1 {
		t.Fatalf("first run: %v", ran)
	}
	keep := func(name string) bool { return !strings.HasPrefix(name, "model/") }
	rep, err := Push(ctx, []*Graph{g}, src, r, SyncOptions{Keep: keep})
	if err != nil || rep.Results != len(g.Nodes) || rep.Partial != 1 {
		t.Fatalf("push = %+v, %v; want %d results, 1 partial (train)", rep, err, len(g.Nodes))
	}
	full, _, _ := src.GetAction(artifacts.Digest(train.Key))
	if _, err := os.Stat(filepath.Join(dir, "cas", full.Outputs["model/global"].String())); err == nil {
		t.Fatal("a results-only push uploaded the model")
	}
	if raw, _ := os.ReadFile(filepath.Join(dir, "ac", train.Key.String())); !strings.Contains(string(raw), `"v":2`) ||
		!strings.Contains(string(raw), `"omitted":"model/global"`) {
		t.Fatalf("the partial entry does not say so: %s", raw)
	}

	// Pull into a fresh store: the train result is there for readers, marked partial.
	dst := openTestStore(t)
	if rep, err := Pull(ctx, []*Graph{g}, dst, r, false); err != nil || rep.Results != len(g.Nodes) || rep.Partial != 1 {
		t.Fatalf("pull = %+v, %v", rep, err)
	}
	a, ok, _ := dst.GetAction(artifacts.Digest(train.Key))
	if !ok || !remote.Partial(a) || a.Outputs["metrics"] != full.Outputs["metrics"] {
		t.Fatalf("pulled train action %+v: want the metrics and the partial mark", a)
	}
	if _, has := a.Outputs["model/global"]; has {
		t.Fatal("the pulled action names a model the store does not hold")
	}
	ran = map[string]int{}
	runPlan(t, g, dst, nil, ran)
	if len(ran) != 0 {
		t.Fatalf("a pulled store with everything cached ran %v", ran)
	}

	// The evaluation's result is lost from the remote: a fresh store fetches the partial
	// train result, and must recompute it before evaluating.
	if err := os.Remove(filepath.Join(dir, "ac", eval.Key.String())); err != nil {
		t.Fatal(err)
	}
	third := openTestStore(t)
	ran = map[string]int{}
	res := runPlan(t, g, third, r, ran)
	if ran[manifest.KindTrain] != 1 || ran[manifest.KindEvaluate] != 1 || ran[manifest.KindPartition] != 0 {
		t.Fatalf("ran %v; want the train stage recomputed for the evaluation, the partition fetched", ran)
	}
	for _, s := range res {
		if s.Key == train.Key.String() && (s.State != StateRan || !strings.Contains(s.Reason, "partial")) {
			t.Errorf("train stage reported %s (%q), want ran because its result is partial", s.State, s.Reason)
		}
	}
	if a, _, _ := third.GetAction(artifacts.Digest(train.Key)); remote.Partial(a) || a.Outputs["model/global"] != full.Outputs["model/global"] {
		t.Fatalf("after the recompute the local train action is %+v, want the complete one", a)
	}
	if ok, omitted, err := r.StatAction(ctx, artifacts.Digest(train.Key)); !ok || len(omitted) != 0 || err != nil {
		t.Fatalf("the remote's train entry after the recompute: %v %v %v, want complete", ok, omitted, err)
	}
	// A later pull into the partial store replaces its partial result with the complete one.
	if rep, err := Pull(ctx, []*Graph{g}, dst, r, false); err != nil || rep.Results != 1 {
		t.Fatalf("pull over a partial store = %+v, %v; want the train result fetched whole", rep, err)
	}
	if a, _, _ := dst.GetAction(artifacts.Digest(train.Key)); remote.Partial(a) {
		t.Fatal("the partial local result was not replaced")
	}
}
