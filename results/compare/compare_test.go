package compare

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/results/listing"
)

func pct(v float64) *float64 { return &v }

// Sides lists only the parameters that differ, sorted, and pairs the runs by key in A's
// order then B's, a run on one side only being "absent" on the other.
func TestSidesAndWriteSides(t *testing.T) {
	a := &Side{Name: "a.yaml", Params: map[string]string{"train.lr": "0.05", "seeds": "[0]", "x": "1"},
		Runs: map[string]listing.Row{
			"fedavg seed=0": {State: listing.Cached, FinalMean: pct(50), FinalPooled: pct(51), BestPooled: pct(52)},
			"local seed=0":  {State: listing.Missing},
		}, order: []string{"fedavg seed=0", "local seed=0"}}
	b := &Side{Name: "b.yaml", Params: map[string]string{"train.lr": "0.5", "seeds": "[0]", "y": "2"},
		Runs: map[string]listing.Row{
			"fedavg seed=0": {State: listing.Cached, FinalMean: pct(60.5), FinalPooled: pct(51), BestPooled: pct(52)},
			"ditto seed=0":  {State: listing.Stale},
		}, order: []string{"fedavg seed=0", "ditto seed=0"}}
	params, runs := Sides(a, b)
	want := []Param{{"train.lr", "0.05", "0.5"}, {"x", "1", ""}, {"y", "", "2"}}
	if len(params) != len(want) {
		t.Fatalf("params %+v, want %+v", params, want)
	}
	for i := range want {
		if params[i] != want[i] {
			t.Errorf("param %d: %+v, want %+v", i, params[i], want[i])
		}
	}
	if len(runs) != 3 || runs[0].Run != "fedavg seed=0" || runs[1].Run != "local seed=0" || runs[2].Run != "ditto seed=0" ||
		runs[1].StateB != "absent" || runs[2].StateA != "absent" || runs[2].StateB != listing.Stale {
		t.Fatalf("runs %+v", runs)
	}
	var buf bytes.Buffer
	WriteSides(&buf, a, b, params, runs)
	out := buf.String()
	for _, s := range []string{"A: a.yaml\nB: b.yaml\n", "(unset)", "+10.50", "missing", "absent"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
}

// With no run computed on both sides there is nothing to pair, and the text says so.
func TestPairRunsNothingCached(t *testing.T) {
	a := &Side{Runs: map[string]listing.Row{"r seed=0": {State: listing.Missing}}, order: []string{"r seed=0"}}
	cmps, err := PairRuns(a, a, nil)
	if err != nil || len(cmps) != 0 {
		t.Fatalf("PairRuns = %+v, %v", cmps, err)
	}
	var buf bytes.Buffer
	WritePaired(&buf, cmps)
	if buf.String() != "\npaired comparison: no run computed on both sides\n" {
		t.Errorf("got %q", buf.String())
	}
}
