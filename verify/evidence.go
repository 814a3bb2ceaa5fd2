package verify

import (
	"fmt"
	"math"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/results/summary"
	"github.com/fedpipe/fedpipe/stats"
)

// Evidence is what a verdict rests on, beside it: the measured value's 95 % interval and
// the difference from the published value in units of the published std. It changes no
// verdict (those stay the tolerance rules of Verify).
type Evidence struct {
	// CI is the measured value's 95 % interval (percent): with several seeds the Student-t
	// interval of the mean over seeds; with one, that run's test-set interval (summary.TestSetInterval).
	// nil when none can be computed (a cost metric, a shifted figure of one seed, a best-round
	// client mean of one seed).
	CI *stats.Interval `json:"measured_ci95,omitempty"`
	// CIOver says which: "seeds" or "test set (Wilson, N test samples)" and the like.
	CIOver string `json:"measured_ci95_over,omitempty"`
	// Standardized is (measured − published) / published std: how many of the paper's own
	// run-to-run standard deviations the measurement lies from its mean. nil when the paper
	// gives no std, or for an "above" claim.
	Standardized *float64 `json:"standardized_diff,omitempty"`
	// Spread is the second verdict: whether the mean of the kept seeds lies inside the 95 %
	// prediction interval of a mean of that many runs, given the published mean ± std over its
	// runs (PublishedSpread). nil where it cannot be decided: no published std or number of
	// runs, fewer than 2 published runs, an "above" claim.
	Spread *Spread `json:"published_spread,omitempty"`
}

// Spread is a measured mean against the published spread: the 95 % prediction interval
// [Lo, Hi] (percent) of the mean of K new runs, from the published mean and std over N runs,
// and whether the measured mean lies inside it.
type Spread struct {
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	K      int     `json:"k"`
	N      int     `json:"n"`
	Within bool    `json:"within"`
}

// PublishedSpread is the 95 % prediction interval of the mean of k new runs, given a
// published mean and std over n runs: mean ± t(0.975, n − 1) · s · √(1/k + 1/n), where s is
// the published std taken as a population std (the papers' numpy std, ddof 0) and converted
// to a sample std, s = std · √(n / (n − 1)). ok is false when n < 2 or k < 1.
func PublishedSpread(mean, std float64, n, k int) (lo, hi float64, ok bool) {
	if n < 2 || k < 1 || std < 0 {
		return 0, 0, false
	}
	s := std * math.Sqrt(float64(n)/float64(n-1))
	half := stats.TQuantile(0.975, float64(n-1)) * s * math.Sqrt(1/float64(k)+1/float64(n))
	return mean - half, mean + half, true
}

// testSetInfo is one measured run's test-set interval of the expectation's metric.
type testSetInfo struct {
	iv  stats.Interval
	how string
	ok  bool
}

// testSetOf computes the test-set interval of expectation e's metric for the run whose
// evaluate action is a and encoded summary b; none for shifted figures and costs.
func testSetOf(store *artifacts.Store, a artifacts.Action, b []byte, e manifest.Expectation) testSetInfo {
	if e.Shift != "" {
		return testSetInfo{}
	}
	s, _, err := results.DecodeOne[results.Summary](b)
	if err != nil {
		return testSetInfo{}
	}
	var clients []float64
	if e.Metric == "final_client_mean" {
		if rows, _, err := results.ReadFrom[results.Client](store, a, results.OutEvaluateClients); err == nil {
			clients = summary.ClientAccuracies(rows)
		}
	}
	iv, how, ok := summary.TestSetInterval(s, clients, e.Metric)
	return testSetInfo{iv: iv, how: how, ok: ok}
}

// setEvidence fills c's Evidence from its measured values m.
func (c *Cell) setEvidence(m *measured) {
	switch {
	case len(m.values) > 1:
		iv := stats.TInterval(m.values)
		c.CI, c.CIOver = &iv, "seeds"
	case len(m.values) == 1 && len(m.testSet) == 1 && m.testSet[0].ok:
		iv := m.testSet[0].iv
		c.CI, c.CIOver = &iv, "test set ("+m.testSet[0].how+")"
	}
	if c.Above == "" && c.Std > 0 {
		z := (c.Measured - c.Published) / c.Std
		c.Standardized = &z
		if lo, hi, ok := PublishedSpread(c.Published, c.Std, c.PublishedRuns, len(m.values)); ok {
			c.Spread = &Spread{Lo: lo, Hi: hi, K: len(m.values), N: c.PublishedRuns, Within: c.Measured >= lo && c.Measured <= hi}
		}
	}
}

// SpreadVerdict is the second verdict as the verdict column shows it after the first:
// "; within the published spread [lo, hi]" or "; outside …"; "" when it cannot be decided.
func (c Cell) SpreadVerdict() string {
	if c.Spread == nil {
		return ""
	}
	where := "outside"
	if c.Spread.Within {
		where = "within"
	}
	return fmt.Sprintf("; %s the published spread [%.2f, %.2f]", where, c.Spread.Lo, c.Spread.Hi)
}

// evidenceMeasured is the interval as the measured column shows it after the value:
// " [lo, hi] over seeds" or " [lo, hi] test set (…)"; "" when there is none.
func (c Cell) evidenceMeasured() string {
	if c.CI == nil || !c.CI.Valid() {
		return ""
	}
	over := c.CIOver
	if over == "seeds" {
		over = "over seeds"
	}
	return fmt.Sprintf(" [%.2f, %.2f] %s", c.CI.Lo, c.CI.Hi, over)
}

// evidenceDiff is the standardized difference as the diff column shows it after the
// difference: " (+1.23 published std)"; "" when there is none.
func (c Cell) evidenceDiff() string {
	if c.Standardized == nil || math.IsNaN(*c.Standardized) || math.IsInf(*c.Standardized, 0) {
		return ""
	}
	return fmt.Sprintf(" (%+.2f published std)", *c.Standardized)
}

// evidenceRuns is the published value's number of runs as the expected column shows it:
// "n=4, " before the tolerance; "" when the paper does not state it.
func (c Cell) evidenceRuns() string {
	if c.PublishedRuns <= 0 || c.Above != "" {
		return ""
	}
	return fmt.Sprintf("n=%d, ", c.PublishedRuns)
}
