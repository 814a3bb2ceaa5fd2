package kept

import (
	"math"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/results/listing"
)

func f64(v float64) *float64 { return &v }

// testLog is a four-round log over 400 rounds whose best (reported) round is 300.
func testLog() manifest.LoggedRun {
	return manifest.LoggedRun{Method: "fedobp", Source: "repo main.log", Evals: []manifest.LoggedEval{
		{Round: 100, Before: 90, After: f64(91), Line: 542},
		{Round: 200, Before: 92, After: f64(93), Line: 550},
		{Round: 300, Before: 93, After: f64(94), Line: 558},
		{Round: 400, Before: 92.5, After: f64(94.5), Line: 566},
	}}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestCompareCurveDifferences(t *testing.T) {
	kept := []listing.CurvePoint{{Round: 100, Before: 91, After: f64(90.5)}, {Round: 200, Before: 91.9}, {Round: 300, Before: 92.8, After: f64(94.1)},
		{Round: 400, Before: 92.4, After: f64(94)}, {Round: 500, Before: 1}}
	c := CompareCurve(testLog(), 400, kept, 1, "")
	if len(c.Rounds) != 5 {
		t.Fatalf("%d rounds, want the 4 logged and the kept round 500 the log lacks", len(c.Rounds))
	}
	want := []struct {
		round    int
		diff, ft *float64
	}{{100, f64(1), f64(-0.5)}, {200, f64(-0.1), nil}, {300, f64(-0.2), f64(0.1)}, {400, f64(-0.1), f64(-0.5)}, {500, nil, nil}}
	for i, w := range want {
		r := c.Rounds[i]
		same := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || near(*a, *b)) }
		if r.Round != w.round || !same(r.Diff, w.diff) || !same(r.DiffFT, w.ft) {
			t.Errorf("round %d: diff %v ft %v, want round %d diff %v ft %v", r.Round, r.Diff, r.DiffFT, w.round, w.diff, w.ft)
		}
	}
	if c.Rounds[4].Logged != nil || c.Rounds[4].Kept == nil {
		t.Error("round 500 should have the kept figure and no logged one")
	}
	if c.Reported != 300 || c.ReportedDiff == nil || !near(*c.ReportedDiff, -0.2) {
		t.Errorf("reported round %d diff %v, want 300 and -0.2", c.Reported, c.ReportedDiff)
	}
	if c.Over || c.Steady || c.Flagged {
		t.Errorf("within 0.5 at the reported round and not steady: over %v steady %v flagged %v", c.Over, c.Steady, c.Flagged)
	}
	rows := c.CurveRows()
	if got := strings.Join(rows[0], " "); got != "100 91.00 90.00 +1.00 90.50 91.00 -0.50 L542" {
		t.Errorf("row 100 = %q", got)
	}
	if got := strings.Join(rows[4], " "); got != "500 1.00 — — — — — —" {
		t.Errorf("row 500 = %q", got)
	}
}

// TestCompareCurveThreshold: a curve more than CurveThreshold off at the reported round,
// or on one side at every evaluation of the last half, is over, and flagged without a
// deviation.
func TestCompareCurveThreshold(t *testing.T) {
	curve := func(d100, d200, d300, d400 float64) []listing.CurvePoint {
		return []listing.CurvePoint{{Round: 100, Before: 90 + d100}, {Round: 200, Before: 92 + d200}, {Round: 300, Before: 93 + d300}, {Round: 400, Before: 92.5 + d400}}
	}
	for _, tc := range []struct {
		name                 string
		kept                 []listing.CurvePoint
		over, steady, flaged bool
	}{
		{"at the reported round", curve(0, 0, -0.6, 0), true, false, true},
		{"exactly the threshold", curve(0, 0, -0.5, 0), false, false, false},
		{"steady over the last half", curve(0, 0, 0.7, 0.6), true, true, true},
		{"first half only", curve(-2, -2, 0, 0), false, false, false},
		{"last half, opposite sides", curve(0, 0, 0.45, -0.8), false, false, false},
		{"last half, one round within", curve(0, 0, 0.4, 0.8), false, false, false},
		{"nothing kept", nil, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CompareCurve(testLog(), 400, tc.kept, 1, "")
			if c.Over != tc.over || c.Steady != tc.steady || c.Flagged != tc.flaged {
				t.Errorf("over %v steady %v flagged %v, want %v %v %v (reported diff %v)", c.Over, c.Steady, c.Flagged, tc.over, tc.steady, tc.flaged, c.ReportedDiff)
			}
			d := CompareCurve(testLog(), 400, tc.kept, 1, "differs from the authors' log; cause not found")
			if d.Over != tc.over || d.Flagged {
				t.Errorf("with a deviation: over %v flagged %v, want %v and never flagged", d.Over, d.Flagged, tc.over)
			}
		})
	}
}

// TestOffLogCurvesCount: a flagged curve is counted, named in the summary line and shown
// on the page with its rounds; one with a deviation shows its text.
func TestOffLogCurvesCount(t *testing.T) {
	off := CompareCurve(testLog(), 400, []listing.CurvePoint{{Round: 300, Before: 92}}, 1, "")
	known := CompareCurve(testLog(), 400, []listing.CurvePoint{{Round: 300, Before: 92}}, 1, "cause not found")
	ms := []Manifest{{File: "a.yaml", Name: "a", Curves: []CurveCheck{off}}, {File: "b.yaml", Name: "b", Curves: []CurveCheck{known}}}
	k := Count(ms)
	if k.OffLog != 1 {
		t.Fatalf("OffLog = %d, want 1", k.OffLog)
	}
	if line := k.Line(); !strings.Contains(line, "1 kept curves differ from the authors' logs with no deviation recorded") {
		t.Errorf("summary line %q does not name the curve off its log", line)
	}
	page := Page(ms, "make reproduced-page")
	for _, want := range []string{"| 300 | 92.00 | 93.00 | -1.00 |", "with no deviation recorded", "Deviation: cause not found", "| 100 | — | 90.00 | — |"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	within := CompareCurve(testLog(), 400, []listing.CurvePoint{{Round: 300, Before: 92.9}}, 1, "noted on the log")
	if p := Page([]Manifest{{File: "c.yaml", Name: "c", Curves: []CurveCheck{within}}}, "x"); strings.Contains(p, "noted on the log") {
		t.Error("the page shows an expectation's deviation beside a curve within the threshold")
	}
	within.OnLog = true
	if p := Page([]Manifest{{File: "c.yaml", Name: "c", Curves: []CurveCheck{within}}}, "x"); !strings.Contains(p, "Deviation: noted on the log") {
		t.Error("the page hides the log entry's own deviation of a curve within the threshold")
	}
	if k := Count(ms[1:]); k.OffLog != 0 || strings.Contains(k.Line(), "kept curves") {
		t.Errorf("a curve with a deviation is counted off its log: %+v", k)
	}
}

// TestAbsentLogShowsTheKeptCurveAlone: a method whose authors published no log is never
// flagged, and the page says the log is absent, where it was looked for, and still shows
// the kept curve's rounds.
func TestAbsentLogShowsTheKeptCurveAlone(t *testing.T) {
	l := manifest.LoggedRun{Method: "fedala", Source: "repo@abc", Absent: "the repository holds logs of 11 other methods, none of FedALA"}
	c := CompareCurve(l, 400, []listing.CurvePoint{{Round: 100, Before: 87.93}, {Round: 400, Before: 89.11, After: f64(96.94)}}, 1, "")
	if c.Over || c.Flagged || c.Steady || len(c.Rounds) != 2 {
		t.Fatalf("absent log: %+v, want two kept rounds, nothing flagged", c)
	}
	if k := Count([]Manifest{{File: "a.yaml", Name: "a", Curves: []CurveCheck{c}}}); k.OffLog != 0 {
		t.Errorf("a curve with no log is counted off its log: %+v", k)
	}
	page := Page([]Manifest{{File: "a.yaml", Name: "a", Curves: []CurveCheck{c}}}, "x")
	for _, want := range []string{"**fedala**, the kept seed, no authors' log in repo@abc: the authors published no log of this method: the repository holds logs of 11 other methods, none of FedALA",
		"| 400 | 89.11 | — | — | 96.94 | — | — | — |"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	var b strings.Builder
	WriteCurvesText(&b, []CurveCheck{c})
	if !strings.Contains(b.String(), "fedala, the kept seed, no authors' log in repo@abc: the authors published no log") {
		t.Errorf("text: %q", b.String())
	}
}

// TestNoLogsEntryCounts: a kept curve with no logs entry is counted, named in the summary
// line, and shown alone on the page saying what to add.
func TestNoLogsEntryCounts(t *testing.T) {
	c := CompareCurve(manifest.LoggedRun{Method: "fedala"}, 400, []listing.CurvePoint{{Round: 400, Before: 89.11}}, 1, "")
	c.NoEntry = true
	ms := []Manifest{{File: "a.yaml", Name: "a", Curves: []CurveCheck{c}}}
	k := Count(ms)
	if k.NoEntry != 1 || k.OffLog != 0 || !strings.Contains(k.Line(), "1 kept curves have no logs entry") {
		t.Errorf("counts %+v, line %q", k, k.Line())
	}
	if p := Page(ms, "x"); !strings.Contains(p, "**fedala**, the kept seed, no logs entry: this manifest records the authors' logs but has no logs entry for this method") ||
		!strings.Contains(p, "| 400 | 89.11 | — |") {
		t.Errorf("page:\n%s", p)
	}
}
