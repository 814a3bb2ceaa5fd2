package kept

import (
	"testing"

	"github.com/fedpipe/fedpipe/verify"
)

// A stale cell's verdict says why, and what its stale result measured over how many of
// its seeds, never as the cell's measurement.
func TestStaleVerdict(t *testing.T) {
	c := verify.Cell{Verdict: verify.Stale, StaleWhy: "train: code 6 → 7", StaleSeeds: 1, StaleMeasured: 42, SeedsOf: 3}
	if v := Verdict(c, false); v != "stale (train: code 6 → 7; it measured 42.00 over 1 of 3 seeds)" {
		t.Errorf("verdict %q", v)
	}
	c.StaleSeeds = 0
	if v := Verdict(c, false); v != "stale (train: code 6 → 7)" {
		t.Errorf("verdict %q with nothing measured", v)
	}
}

// A differing cell whose expectation records a deviation is counted apart from the cells
// that differ unexplained, and its verdict says so (with the text in detail).
func TestKnownDeviationCounted(t *testing.T) {
	cells := []verify.Cell{{Verdict: verify.Fail, Known: "the partition is another draw"}, {Verdict: verify.Pass}}
	k := Count([]Manifest{{Cells: cells}})
	if k.Known != 1 || k.Differs != 0 || k.Reproduced != 1 ||
		k.Line() != "1 of 2 published cells reproduced at paper scale (0 stale, 0 not computed, 1 differ with a known deviation)" {
		t.Errorf("counts %+v, line %q", k, k.Line())
	}
	if v := Verdict(cells[0], false); v != "differs (known deviation)" {
		t.Errorf("verdict %q", v)
	}
	if v := Verdict(cells[0], true); v != "differs (known deviation: the partition is another draw)" {
		t.Errorf("detailed verdict %q", v)
	}
}

// Cells that need a missing input are counted apart from the cells that can be computed,
// by what they need, and say what they need in their verdict.
func TestCountKeepsCellsNeedingInputsApart(t *testing.T) {
	init := "model.init: w.safetensors (pretrained)"
	k := Count([]Manifest{{Cells: []verify.Cell{{Verdict: verify.Pass}, {Verdict: verify.Missing}, {Verdict: verify.Needs, Needs: init}}},
		{Cells: []verify.Cell{{Verdict: verify.Needs, Needs: init}, {Verdict: verify.Needs, Needs: "model.other: x"}}}})
	if k.Cells != 2 || k.Reproduced != 1 || k.Missing != 1 || k.Needs["model.init"] != 2 || k.Needs["model.other"] != 1 {
		t.Errorf("counts %+v", k)
	}
	if want := "1 of 2 published cells reproduced at paper scale (0 stale, 1 not computed); 2 more need model.init, 1 more need model.other, not obtainable here"; k.Line() != want {
		t.Errorf("line %q, want %q", k.Line(), want)
	}
	if v := Verdict(verify.Cell{Verdict: verify.Needs, Needs: init}, true); v != "needs "+init {
		t.Errorf("verdict %q", v)
	}
}

// The count tells the reproduced cells whose mean lies within the published spread from
// those outside it, of those where it can be decided, and a cell's verdict says which.
func TestCountWithinSpread(t *testing.T) {
	cells := []verify.Cell{
		{Verdict: verify.Pass, Published: 99.34, Std: 0.02, PublishedRuns: 4, Measured: 99.40, Evidence: verify.Evidence{Spread: &verify.Spread{Lo: 99.3, Hi: 99.4, K: 1, N: 4, Within: true}}},
		{Verdict: verify.Pass, Published: 96.82, Std: 0.03, PublishedRuns: 4, Measured: 96.39, Evidence: verify.Evidence{Spread: &verify.Spread{Lo: 96.7, Hi: 96.9, K: 1, N: 4}}},
		{Verdict: verify.Pass, Published: 50, Std: 1, Measured: 50.5}, // no n: undecided
		{Verdict: verify.Fail, Published: 50, Std: 1, PublishedRuns: 4, Measured: 60, Evidence: verify.Evidence{Spread: &verify.Spread{Lo: 47, Hi: 53, K: 1, N: 4}}}, // not reproduced: not counted
	}
	k := Count([]Manifest{{Cells: cells}})
	if want := "3 of 4 published cells reproduced at paper scale (0 stale, 0 not computed, 1 differ); 1 of the 2 reproduced with a published spread also within it"; k.Line() != want {
		t.Errorf("line %q, want %q", k.Line(), want)
	}
	if v := Verdict(cells[1], false); v != "reproduced; outside the published spread [96.70, 96.90]" {
		t.Errorf("verdict %q, want it to say the mean lies outside the published spread", v)
	}
}
