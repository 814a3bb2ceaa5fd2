package pipeline

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/live"
	"github.com/fedpipe/fedpipe/manifest"
)

// A train stage's journal is in the store's progress folder (and on the remote) while it
// runs, ends finished with the stage's result, failed with a failing stage, and is not
// written at all with NoJournal; the stage's outputs are the same either way.
func TestTrainStagePublishesJournal(t *testing.T) {
	ctx := context.Background()
	g := partialGraph(t)
	var train *Node
	for _, n := range g.Nodes {
		if n.Kind == manifest.KindTrain {
			train = n
		}
	}
	run := func(noJournal bool, r *remote.Remote, fail error) (string, []StageResult, error) {
		st := openTestStore(t)
		stages := fakeStages(map[string]int{})
		stages[manifest.KindTrain] = func(_ context.Context, sc *StageContext) (Outputs, error) {
			for round := 1; round <= 3; round++ {
				loss := 1 / float64(round)
				sc.Publish(live.Point{Round: round, Clients: 1, TrainLoss: &loss})
			}
			// The journal is written in the background: wait for it (briefly without one).
			var b []byte
			var err error
			for wait := 0; wait < 100; wait++ {
				if b, err = os.ReadFile(live.Path(st.Dir(), sc.Node.Key.String())); err == nil || (noJournal && wait == 5) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if noJournal != (err != nil) {
				t.Errorf("NoJournal %v: journal file while training: %v", noJournal, err)
			}
			if err == nil {
				if j, err := live.Decode(b); err != nil || j.State != live.Running || j.Name != sc.Node.Name {
					t.Errorf("journal while training: %+v, %v", j, err)
				}
			}
			return Outputs{"metrics": []byte("m"), "model/global": []byte("w")}, fail
		}
		plan, err := Plan(g, st, &LogCapture{})
		if err != nil {
			t.Fatal(err)
		}
		e := &Executor{Store: st, Stages: stages, Progress: Quiet{}, Remote: r, NoJournal: noJournal}
		res, err := e.Execute(ctx, g, plan)
		return st.Dir(), res, err
	}
	r, err := remote.Open(ctx, t.TempDir(), remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir, with, err := run(false, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(live.Path(dir, train.Key.String()))
	if err != nil {
		t.Fatal(err)
	}
	j, err := live.Decode(b)
	if err != nil || j.State != live.Finished || len(j.Points) != 3 || *j.Points[2].TrainLoss != 1.0/3 {
		t.Fatalf("journal after the stage: %+v, %v", j, err)
	}
	onRemote, err := r.Progress(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rj, err := live.Decode(onRemote[train.Key.String()]); err != nil || rj.State != live.Finished || rj.Holder != r.Holder() {
		t.Fatalf("remote journal %+v, %v (holder %q)", rj, err, r.Holder())
	}
	dir, without, err := run(true, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live.Path(dir, train.Key.String())); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("NoJournal left a journal: %v", err)
	}
	for i := range with {
		if with[i].Key != without[i].Key || len(with[i].Outputs) != len(without[i].Outputs) {
			t.Fatalf("stage %s differs with and without the journal", with[i].Name)
		}
		for name, d := range with[i].Outputs {
			if without[i].Outputs[name] != d {
				t.Fatalf("%s output %s differs with and without the journal", with[i].Name, name)
			}
		}
	}
	dir, _, err = run(false, nil, errors.New("training diverged"))
	if err == nil {
		t.Fatal("failing stage: no error")
	}
	b, _ = os.ReadFile(live.Path(dir, train.Key.String()))
	if j, err := live.Decode(b); err != nil || j.State != live.Failed || !strings.Contains(j.Error, "training diverged") {
		t.Fatalf("journal of a failed stage: %+v, %v", j, err)
	}
}
