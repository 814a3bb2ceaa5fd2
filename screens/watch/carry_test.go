package watch

import (
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/live"
	"github.com/fedpipe/fedpipe/pipeline"
)

// journal is a journal of key with a point per round from first to last.
func journal(key string, first, last int) *live.Journal {
	j := &live.Journal{Key: key}
	for r := first; r <= last; r++ {
		loss := float64(r)
		j.Points = append(j.Points, live.Point{Round: r, TrainLoss: &loss})
	}
	return j
}

func rounds(ps []live.Point) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.Round)
	}
	return out
}

func span(first, last int) []int {
	var out []int
	for r := first; r <= last; r++ {
		out = append(out, r)
	}
	return out
}

// A 40-round run that extended a cached 20-round run, which itself extended a 10-round
// run, carries rounds 1–10 from the first and 11–20 from the second: its curve is 1–40.
func TestCarryTakesEarlierRoundsFromTheRunsExtended(t *testing.T) {
	k10, k20 := artifacts.Digest{1}, artifacts.Digest{2}
	js := map[string]*live.Journal{
		k10.String(): journal(k10.String(), 1, 10),
		// The 20-round run's journal: its own rounds 11–20 only.
		k20.String(): journal(k20.String(), 11, 20),
	}
	own := journal("own", 21, 40)
	earlier := []pipeline.EarlierRun{{Rounds: 20, Key: k20}, {Rounds: 10, Key: k10}}
	got := Carry(own, earlier, js)
	if want := span(1, 20); !reflect.DeepEqual(rounds(got), want) {
		t.Fatalf("carried rounds %v, want %v", rounds(got), want)
	}
	r := Run{Journal: own, Carried: got}
	if want := span(1, 40); !reflect.DeepEqual(rounds(r.Points()), want) {
		t.Fatalf("curve rounds %v, want %v", rounds(r.Points()), want)
	}
	// A run resumed from its own checkpoint already holds round 1: nothing is carried.
	if got := Carry(journal("own", 1, 30), earlier, js); len(got) != 0 {
		t.Fatalf("a journal from round 1 carried %v", rounds(got))
	}
	// A longer run not started yet shows the rounds it will continue from.
	if got := Carry(nil, earlier, js); !reflect.DeepEqual(rounds(got), span(1, 20)) {
		t.Fatalf("a waiting run carried %v", rounds(got))
	}
	// A shorter run without a journal gives nothing; the others still do.
	delete(js, k10.String())
	if got := Carry(own, earlier, js); !reflect.DeepEqual(rounds(got), span(11, 20)) {
		t.Fatalf("without the 10-round journal, carried %v", rounds(got))
	}
}

// Who holds a run: a worker under its lease, this machine's process, another host's
// process; no one for a waiting, finished or stalled run.
func TestHolder(t *testing.T) {
	w := &Watch{host: "here"}
	cases := []struct {
		r    Run
		want string
	}{
		{Run{State: Training, Journal: &live.Journal{Holder: "w1/42", Leased: true}}, "worker w1/42 (lease)"},
		{Run{State: Training, Journal: &live.Journal{Holder: "here:7", Host: "here", PID: 7}}, "this machine (pid 7)"},
		{Run{State: Training, Journal: &live.Journal{Holder: "there:7", Host: "there", PID: 7}}, "there:7"},
		{Run{State: Waiting}, "none (waiting)"},
		{Run{State: live.Finished, Journal: &live.Journal{Holder: "here:7"}}, "none (done)"},
		{Run{State: live.Stalled, Journal: &live.Journal{Holder: "w1/42", Leased: true}}, "none (w1/42 stalled)"},
		{Run{State: live.Failed, Journal: &live.Journal{Holder: "here:7"}}, "none (failed)"},
	}
	for _, c := range cases {
		c.r.Holder = w.holder(c.r)
		if got := HolderText(c.r); got != c.want {
			t.Errorf("%s run: %q, want %q", c.r.State, got, c.want)
		}
	}
}

// The watch's table: a line per run, padded to the longest label, and the count by state.
func TestText(t *testing.T) {
	loss := 0.5
	runs := []Run{
		{State: Training, Label: "fedavg seed=0", Detail: "round 3 of 10", Journal: &live.Journal{Points: []live.Point{{Round: 3, TrainLoss: &loss, Eval: &live.Eval{TestAccuracy: 0.5}}}}},
		{State: Waiting, Label: "local seed=0"},
	}
	want := "training    fedavg seed=0  round 3 of 10  train loss 0.5000, test acc 50.00% (round 3)\n" +
		"waiting     local seed=0\n" +
		"2 runs: 1 training, 1 waiting\n"
	if got := Text(runs); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if Settled(runs) || !Settled([]Run{{State: live.Finished}, {State: live.Failed}}) {
		t.Fatal("Settled: wrong")
	}
}
