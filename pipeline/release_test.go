package pipeline

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/manifest"
)

// heldHeap is the heap memory the process holds from the system (in use or free but not
// yet returned).
func heldHeap() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapSys - ms.HeapReleased
}

// A stage that ran long enough leaves no freed heap behind it: what it allocated and
// dropped is back with the system when the next stage starts, not at its peak until Go's
// scavenger gets to it.
func TestLongStageHandsMemoryBack(t *testing.T) {
	const big = 256 << 20
	for _, tc := range []struct {
		name    string
		after   time.Duration
		release bool
	}{{"released", time.Nanosecond, true}, {"kept", -1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			g := partialGraph(t)
			st := openTestStore(t)
			stages := fakeStages(map[string]int{})
			train := stages[manifest.KindTrain]
			var during uint64
			stages[manifest.KindTrain] = func(ctx context.Context, sc *StageContext) (Outputs, error) {
				buf := make([]byte, big)
				for i := 0; i < len(buf); i += 4096 {
					buf[i] = 1
				}
				during = heldHeap()
				return train(ctx, sc)
			}
			var evalStart uint64
			eval := stages[manifest.KindEvaluate]
			stages[manifest.KindEvaluate] = func(ctx context.Context, sc *StageContext) (Outputs, error) {
				evalStart = heldHeap()
				return eval(ctx, sc)
			}
			plan, err := Plan(g, st, &LogCapture{})
			if err != nil {
				t.Fatal(err)
			}
			e := &Executor{Store: st, Stages: stages, Progress: Quiet{}, ReleaseAfter: tc.after}
			if _, err := e.Execute(context.Background(), g, plan); err != nil {
				t.Fatal(err)
			}
			t.Logf("held heap while training %d MiB, when the evaluation started %d MiB", during>>20, evalStart>>20)
			if tc.release && evalStart > during-big*3/4 {
				t.Errorf("the evaluation started with %d MiB of heap held, the training stage's %d MiB peak less under 3/4 of the %d MiB it dropped", evalStart>>20, during>>20, big>>20)
			}
			// The control: without the release the dropped heap is still held, so what the
			// released case shows is the release's doing, not the scavenger's.
			if !tc.release && evalStart < during-big/4 {
				t.Errorf("without the release the heap held fell from %d to %d MiB: the test cannot tell the release from Go's scavenger", during>>20, evalStart>>20)
			}
		})
	}
}
