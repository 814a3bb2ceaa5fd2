package kept

import (
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/verify"
)

// Choose reads each cell from one backend's kept result: a current one (reproduced or
// differs) of the reference backend first, else another backend's current one, else a
// stale one, else the reference's cell (not computed); the verdict names the backend it
// reads when that is not the reference's or when others keep results too.
func TestChooseKept(t *testing.T) {
	cell := func(v string, measured float64) verify.Cell { return verify.Cell{Verdict: v, Measured: measured} }
	fast := Reading{Family: "fpfast", Cells: []verify.Cell{cell(verify.Pass, 1), cell(verify.Stale, 2), cell("not computed", 0), cell(verify.Stale, 4), cell("not computed", 0)},
		Provenance: [][]string{{"f0"}, {"f1"}, {"f2"}, {"f3"}, {"f4"}}}
	gpu := Reading{Family: "xla-cuda", Cells: []verify.Cell{cell(verify.Fail, 10), cell(verify.Pass, 20), cell(verify.Pass, 30), cell("not computed", 0), cell("not computed", 0)},
		Provenance: [][]string{{"g0"}, {"g1"}, {"g2"}, {"g3"}, {"g4"}}}
	// Another build of the same backend (an XLA plugin whose key the chosen result lacks)
	// reads cell 2 as stale: no other backend's result to name.
	gpu2 := Reading{Family: "xla-cuda", Cells: []verify.Cell{cell("not computed", 0), cell("not computed", 0), cell(verify.Stale, 31), cell("not computed", 0), cell("not computed", 0)}}
	cells, prov := Choose([]Reading{fast, gpu, gpu2})
	want := []struct {
		measured float64
		on       string
		others   []string
		prov     string
	}{
		{1, "fpfast", []string{"xla-cuda: differs"}, "f0"}, // both current: the reference's
		{20, "xla-cuda", []string{"fpfast: stale"}, "g1"},  // the reference's stale: the other's current one
		{30, "xla-cuda", nil, "g2"},                        // the other's alone
		{4, "", nil, "f3"},                                 // the reference's alone (stale): nothing to name
		{0, "", nil, "f4"},                                 // none: not computed
	}
	for i, w := range want {
		c := cells[i]
		if c.Measured != w.measured || c.KeptOn != w.on || !reflect.DeepEqual(c.KeptOthers, w.others) || prov[i][0] != w.prov {
			t.Errorf("cell %d: measured %v on %q others %v provenance %v; want %v on %q others %v provenance %s",
				i, c.Measured, c.KeptOn, c.KeptOthers, prov[i], w.measured, w.on, w.others, w.prov)
		}
	}
	if v := Verdict(cells[1], true); v != "reproduced (the xla-cuda result; also kept: fpfast: stale)" {
		t.Errorf("verdict %q", v)
	}
	if v := Verdict(cells[3], true); v != "stale" {
		t.Errorf("a reference-only cell's verdict %q names a backend", v)
	}
	if got := Count(([]Manifest{{Cells: cells}})); got.Reproduced != 3 || got.Stale != 1 || got.Missing != 1 {
		t.Errorf("counts %+v: want the other backend's results counted", got)
	}
}
