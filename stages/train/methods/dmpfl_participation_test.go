package methods

import (
	"context"
	"testing"

	"github.com/fedpipe/fedpipe/stages/partition"
	"github.com/fedpipe/fedpipe/stages/train"
)

// DM-PFL readjusts a client's mask at every readjust_every-th participation of that
// client (Alg. 1), not when the round number divides.
func TestDMPFLReadjustsPerParticipation(t *testing.T) {
	d := &dmpfl{every: 2}
	st := &train.State{}
	d.Init(st, 2)
	var got []bool
	for _, round := range []int{1, 3, 4, 7} { // client 0 participates in these rounds
		got = append(got, d.readjust(st, 0, round))
	}
	if want := []bool{false, true, false, true}; !equalBools(got, want) {
		t.Errorf("readjusts at participations %v, want %v (every 2nd participation)", got, want)
	}
	if d.readjust(st, 1, 4) {
		t.Error("client 1's first participation readjusted")
	}
	d.byRound = true
	if !d.readjust(st, 1, 4) || d.readjust(st, 1, 5) {
		t.Error("readjust_by_round does not follow the round number")
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Under Dir(0.1) label skew the personal masks move away from the global one: the
// selection table's |m_c ∩ m_g| / |m_c| (1 before the first round: every client starts
// from the global mask) falls below 1 and keeps falling.
func TestDMPFLPersonalMasksDivergeUnderDir01(t *testing.T) {
	r, cfg := methodRun(t, "dmpfl", map[string]float64{"readjust_every": 1, "alpha_s": 0.2, "iterations": 0}, nil)
	r.Partition.Scheme, r.Partition.Alpha, r.Partition.MinSamples = "dirichlet", 0.1, 10
	a, err := partition.Make(cfg.Data, r.Dataset, r.Partition, r.Seed)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Assign = a
	r.Train.Rounds, r.Train.Participation = 5, 1
	st, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	overlap := map[int][2]int{} // round → (Σ overlap, Σ active) over clients and tensors
	for _, s := range st.Selection {
		o := overlap[s.Round]
		overlap[s.Round] = [2]int{o[0] + s.Overlap, o[1] + s.Active}
	}
	frac := func(round int) float64 { o := overlap[round]; return float64(o[0]) / float64(max(o[1], 1)) }
	if len(overlap) == 0 || overlap[5][1] == 0 {
		t.Fatalf("no overlap recorded: %v", overlap)
	}
	if frac(5) >= 1 || frac(5) >= frac(1) {
		t.Errorf("|m_c ∩ m_g| / |m_c| by round: 1 → %.3f, 5 → %.3f; want the personal masks to move away", frac(1), frac(5))
	}
	t.Logf("overlap fraction: round 1 %.3f, round 5 %.3f", frac(1), frac(5))
}
