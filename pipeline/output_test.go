package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// A stage may store outputs as it makes them (PutOutput) and return the rest: its result
// names both, and readers get them; a name given twice, or a stage that fails after
// PutOutput, records no result, so the stage runs again.
func TestPutOutput(t *testing.T) {
	for _, tc := range []struct {
		name string
		body func(sc *StageContext) (Outputs, error)
		fail string
	}{
		{"streamed", func(sc *StageContext) (Outputs, error) {
			if err := sc.PutOutput("model/global", []byte("weights of "+sc.Node.Name)); err != nil {
				return nil, err
			}
			return Outputs{"metrics": []byte("table: metrics")}, nil
		}, ""},
		{"twice", func(sc *StageContext) (Outputs, error) {
			if err := sc.PutOutput("model/global", []byte("weights")); err != nil {
				return nil, err
			}
			return Outputs{"model/global": []byte("other weights")}, nil
		}, "given twice"},
		{"failed", func(sc *StageContext) (Outputs, error) {
			if err := sc.PutOutput("model/global", []byte("weights")); err != nil {
				return nil, err
			}
			return nil, errors.New("out of time")
		}, "out of time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := partialGraph(t)
			st := openTestStore(t)
			ran := map[string]int{}
			stages := fakeStages(ran)
			stages[manifest.KindTrain] = func(_ context.Context, sc *StageContext) (Outputs, error) {
				ran[sc.Node.Kind]++
				return tc.body(sc)
			}
			plan, err := Plan(g, st, &LogCapture{})
			if err != nil {
				t.Fatal(err)
			}
			e := &Executor{Store: st, Stages: stages, Progress: Quiet{}}
			_, err = e.Execute(context.Background(), g, plan)
			if tc.fail != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fail) {
					t.Fatalf("error %v, want one saying %q", err, tc.fail)
				}
				again, err := Plan(g, st, &LogCapture{})
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range again {
					if p.Node.Kind == manifest.KindTrain && p.State == StateCached {
						t.Errorf("the train stage's result was recorded although the stage failed")
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var train *Node
			for _, p := range plan {
				if p.Node.Kind == manifest.KindTrain {
					train = p.Node
				}
			}
			a, ok, err := st.GetAction([32]byte(train.Key))
			if err != nil || !ok {
				t.Fatalf("no result for the train stage: %v", err)
			}
			if len(a.Outputs) != 2 || a.Outputs["model/global"].IsZero() || a.Outputs["metrics"].IsZero() {
				t.Errorf("the result names %v, want model/global (stored early) and metrics", a.Outputs)
			}
			if ran[manifest.KindEvaluate] != 1 {
				t.Errorf("the evaluation, which reads the streamed model, ran %d times", ran[manifest.KindEvaluate])
			}
		})
	}
}
