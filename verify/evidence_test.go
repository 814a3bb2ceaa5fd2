package verify

import (
	"math"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/stats"
)

// Several seeds: the t interval over seeds; one seed: that run's test-set interval; the
// standardized difference is in published stds; the row shows all three and the published
// runs, and the verdict (the tolerance rule's) is followed by the second, against the
// published spread.
func TestEvidenceBesideTheVerdict(t *testing.T) {
	c := Cell{Method: "fedobp", Config: "fedobp", Metric: "best_pooled", Published: 96.89, Std: 0.03, PublishedRuns: 4, Tolerance: 1,
		Measured: 96.46, Seeds: 1, SeedsOf: 4, Diff: -0.43, Verdict: Pass}
	w := stats.Wilson(16845, 17463)
	c.setEvidence(&measured{values: []float64{96.46}, testSet: []testSetInfo{{iv: w, how: "Wilson, 17463 test samples", ok: true}}})
	if c.CI == nil || *c.CI != w || c.CIOver != "test set (Wilson, 17463 test samples)" || c.Standardized == nil ||
		math.Abs(*c.Standardized-(-0.43/0.03)) > 1e-9 {
		t.Fatalf("one seed: %+v", c.Evidence)
	}
	row := c.Row()
	if row[3] != "96.89 ± 0.03 (n=4, tol 1.00)" || !strings.HasSuffix(row[4], "test set (Wilson, 17463 test samples)") ||
		row[5] != "-0.43 (-14.33 published std)" || row[6] != Pass+"; outside the published spread [96.77, 97.01]" {
		t.Errorf("row: %q", row)
	}

	vals := []float64{90.1, 91.3, 90.7}
	c = Cell{Published: 90, Tolerance: 1, Measured: stats.Mean(vals), Seeds: 3, Verdict: Pass}
	c.setEvidence(&measured{values: vals, testSet: make([]testSetInfo, 3)})
	if want := stats.TInterval(vals); c.CI == nil || *c.CI != want || c.CIOver != "seeds" || c.Standardized != nil {
		t.Errorf("three seeds, no published std: %+v", c.Evidence)
	}
	if row := c.Row(); !strings.Contains(row[4], "over seeds") || strings.Contains(row[5], "std") || strings.Contains(row[3], "n=") {
		t.Errorf("row: %q", row)
	}

	// One seed whose interval cannot be computed (a shifted figure): nothing is made up.
	c = Cell{Published: 50, Std: 1, Tolerance: 1, Measured: 51, Seeds: 1, Verdict: Pass, Above: ""}
	c.setEvidence(&measured{values: []float64{51}, testSet: []testSetInfo{{}}})
	if c.CI != nil || strings.Contains(c.Row()[4], "[") {
		t.Errorf("no interval: %+v %q", c.Evidence, c.Row())
	}
	// A claim (above) has no published std to standardize by.
	c = Cell{Above: "fedavg", Std: 1, Measured: 60, Other: 55, Seeds: 1, Verdict: Pass}
	c.setEvidence(&measured{values: []float64{60}, testSet: []testSetInfo{{}}})
	if c.Standardized != nil {
		t.Errorf("above: %+v", c.Evidence)
	}
}

// TestPublishedSpread: the prediction interval of a mean of k runs against a published mean
// ± population std over n runs, against the values computed by hand (t(0.975, 3) = 3.182446;
// s = std·√(4/3)); no interval for n < 2; and the second verdict counted apart.
func TestPublishedSpread(t *testing.T) {
	lo, hi, ok := PublishedSpread(10, 1, 4, 1)
	half := 3.182446 * math.Sqrt(4.0/3) * math.Sqrt(1+0.25)
	if !ok || math.Abs(lo-(10-half)) > 1e-4 || math.Abs(hi-(10+half)) > 1e-4 {
		t.Errorf("n=4, k=1: [%v, %v], want 10 ± %.4f", lo, hi, half)
	}
	lo4, hi4, _ := PublishedSpread(10, 1, 4, 4)
	if w1, w4 := hi-lo, hi4-lo4; math.Abs(w4/w1-math.Sqrt(0.5/1.25)) > 1e-9 {
		t.Errorf("4 kept seeds narrow the interval by %v, want √(0.5/1.25)", w4/w1)
	}
	if _, _, ok := PublishedSpread(10, 1, 1, 1); ok {
		t.Error("an interval from one published run")
	}
	cells := []Cell{
		{Verdict: Pass, Published: 99.34, Std: 0.02, PublishedRuns: 4},
		{Verdict: Pass, Published: 96.82, Std: 0.03, PublishedRuns: 4},
		{Verdict: Pass, Published: 50, Std: 1},                   // no n: undecided
		{Verdict: Fail, Published: 50, Std: 1, PublishedRuns: 4}, // not reproduced: not counted
	}
	for i, m := range [][]float64{{99.40}, {96.39}, {50.5}, {60}} {
		cells[i].Measured = m[0]
		cells[i].setEvidence(&measured{values: m})
	}
	if cells[0].Spread == nil || !cells[0].Spread.Within || cells[1].Spread == nil || cells[1].Spread.Within || cells[2].Spread != nil {
		t.Fatalf("spreads %+v %+v %+v: want within, outside (−0.43 points, −14.3 stds), undecided", cells[0].Spread, cells[1].Spread, cells[2].Spread)
	}
	if v := cells[1].SpreadVerdict(); !strings.HasPrefix(v, "; outside the published spread [") {
		t.Errorf("second verdict %q does not say it lies outside the published spread", v)
	}
}
