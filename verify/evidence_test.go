package verify

import (
	"math"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/stats"
)

// Several seeds: the t interval over seeds; one seed: that run's test-set interval; the
// standardized difference is in published stds; the row shows all three and the published
// runs, and the verdict is untouched.
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
		row[5] != "-0.43 (-14.33 published std)" || row[6] != Pass {
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
