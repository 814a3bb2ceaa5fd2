package verify

import "testing"

// A known deviation is reported beside the failures and does not count against the run;
// a cell not computed does.
func TestTally(t *testing.T) {
	cells := []Cell{{Verdict: Pass}, {Verdict: Pass}, {Verdict: Fail, Known: "issue"}, {Verdict: Fail}, {Verdict: Missing}}
	tl := TallyOf(cells)
	if tl != (Tally{Passed: 2, Failed: 2, Missing: 1, Known: 1}) {
		t.Fatalf("TallyOf = %+v", tl)
	}
	if got, want := tl.String(), "2 passed, 2 (1 with a known deviation) failed, 1 not computed"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if tl.Unexplained() != 2 {
		t.Errorf("Unexplained = %d, want 2", tl.Unexplained())
	}
	if got, want := TallyOf(cells[:2]).String(), "2 passed, 0 failed, 0 not computed"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}
