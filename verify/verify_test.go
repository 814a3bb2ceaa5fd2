package verify

import (
	"math"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/results"
)

// A cell under a shift names the shift and level, so the CLI's table and the report's
// (which both use Row) tell the degree-0.5 row from the unshifted one.
func TestRowNamesShiftAndFormatsCosts(t *testing.T) {
	c := Cell{Method: "fedavg", Config: "fedavg", Metric: "final_client_mean", Published: 46.66, Tolerance: 0.01,
		Measured: 46.664, Seeds: 1, Diff: 0.004, Verdict: Pass, Shift: "degree", Level: 0.5}
	row := c.Row()
	if row[1] != "fedavg [degree 0.5]" {
		t.Errorf("cell %q, want %q", row[1], "fedavg [degree 0.5]")
	}
	if row[3] != "46.66 (tol 0.01)" || row[4] != "46.66 (1 seed)" || row[5] != "+0.00" {
		t.Errorf("row %q: no spread without a published std or a second seed", row)
	}
	spread := c
	spread.Std, spread.Seeds, spread.SeedsOf, spread.MeasuredStd = 0.45, 2, 4, 0.2
	if row := spread.Row(); row[3] != "46.66 ± 0.45 (tol 0.01)" || row[4] != "46.66 ± 0.20 (2 of 4 seeds)" {
		t.Errorf("row %q: a published std and two seeds' spread are shown", row)
	}
	spread.SeedsOf = 0
	if got := spread.Row()[4]; got != "46.66 ± 0.20 (2 seeds)" {
		t.Errorf("measured %q", got)
	}
	c.Shift = ""
	if got := c.Row()[1]; got != "fedavg" {
		t.Errorf("unshifted cell %q", got)
	}
	cost := Cell{Method: "dmpfl", Config: "dmpfl", Metric: "flops_1e12", Published: 0.02363, Tolerance: 1e-6,
		Measured: 0.02362, Seeds: 1, Diff: -1e-5, Verdict: Fail}
	if row := cost.Row(); row[3] != "0.02363 (tol 1e-06)" || row[5] != "-1e-05" {
		t.Errorf("cost row %q: costs keep 4 significant digits", row)
	}
	if md := Markdown([]Cell{c, cost}); strings.Count(md, "\n") != 4 {
		t.Errorf("markdown has %d lines, want header, rule and 2 rows:\n%s", strings.Count(md, "\n"), md)
	}
}

// Metric names without "_ft" read the figures before fine-tuning, those with it the
// figures after; a run that does not fine-tune has no "_ft" figure.
func TestValueBeforeAndAfterFinetuning(t *testing.T) {
	s := results.Summary{Pooled: 0.5, Mean: 0.4, Best: results.Best{Pooled: 0.88, Mean: 0.8}}
	if v := Value(s, "best_pooled_ft"); !math.IsNaN(v) {
		t.Errorf("best_pooled_ft of a run without fine-tuning = %v, want NaN", v)
	}
	s.FT = results.Finetuned{Has: 1, Pooled: 0.9, Mean: 0.85, BestPooled: 0.97, BestMean: 0.95}
	for metric, want := range map[string]float64{"best_pooled": 88, "best_pooled_ft": 97, "final_pooled": 50,
		"final_pooled_ft": 90, "final_client_mean": 40, "final_client_mean_ft": 85, "best_client_mean_ft": 95} {
		if got := Value(s, metric); math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", metric, got, want)
		}
	}
}
