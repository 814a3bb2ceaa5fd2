package verify

import (
	"strings"
	"testing"
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
