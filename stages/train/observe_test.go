package train

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/model"
)

// Observe sees every round with the trained clients' mean loss and the evaluation's rows,
// and changes nothing: the states' fingerprints and metrics are those of a run without it.
func TestObserveReadsOnly(t *testing.T) {
	ds, a := tinyImages(36, 8, 3)
	for _, lockstep := range []bool{false, true} {
		r := imageRun("fedavg", model.ArchLogReg)
		r.Model.BNStats, r.Model.BNParams = "", ""
		r.Train.Rounds, r.Train.EvalEvery, r.Train.Participation = 3, 2, 0.67
		plain, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: model.CPUBackend, Lockstep: lockstep})
		if err != nil {
			t.Fatal(err)
		}
		var seen []RoundStats
		observed, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: model.CPUBackend, Lockstep: lockstep,
			Observe: func(s RoundStats) {
				s.Evals = append([]Metric(nil), s.Evals...)
				seen = append(seen, s)
			}})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(plain.Fingerprints, observed.Fingerprints) || !reflect.DeepEqual(plain.Metrics, observed.Metrics) {
			t.Fatalf("lockstep %v: observing changed the run", lockstep)
		}
		if len(seen) != 3 {
			t.Fatalf("lockstep %v: %d rounds observed, want 3", lockstep, len(seen))
		}
		for i, s := range seen {
			if s.Round != i+1 || s.Rounds != 3 || s.Clients != 2 || s.Batches == 0 || !(s.TrainLoss > 0) || math.IsInf(s.TrainLoss, 0) {
				t.Fatalf("lockstep %v: round %d observed as %+v", lockstep, i+1, s)
			}
			if (len(s.Evals) > 0) != (s.Round == 2 || s.Round == 3) {
				t.Fatalf("lockstep %v: round %d has %d evaluation rows", lockstep, s.Round, len(s.Evals))
			}
		}
		if got := len(seen[1].Evals) + len(seen[2].Evals); got != len(plain.Metrics) {
			t.Fatalf("lockstep %v: %d evaluation rows observed, the run has %d", lockstep, got, len(plain.Metrics))
		}
	}
}
