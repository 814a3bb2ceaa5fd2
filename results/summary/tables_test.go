package summary

import (
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// EntryOf labels a run; SetSummary and SetShift add what the store holds, the cost only
// where the summary's metadata records one.
func TestEntryOf(t *testing.T) {
	r := &manifest.Run{MethodName: "mine", Method: "fedavg", Seed: 2, Vary: []manifest.Assignment{{Path: "train.lr", Value: "0.1"}}}
	e := EntryOf(r, "tiny "+r.Config())
	if e.Run != "mine lr=0.1 seed=2" || e.Config != "tiny mine lr=0.1" || e.Method != "fedavg" || e.Seed != 2 || e.Evaluated || e.Shifted {
		t.Errorf("EntryOf = %+v", e)
	}
	e.SetSummary(Summary{Pooled: 0.5}, map[string]string{"flops": "3e9", "mb_up": "1.5"})
	if !e.Evaluated || e.Pooled != 0.5 || e.Cost == nil || e.Cost.FLOPs != 3e9 || e.Cost.MBUp != 1.5 {
		t.Errorf("after SetSummary: %+v (cost %+v)", e, e.Cost)
	}
	e.SetSummary(Summary{Pooled: 0.6}, nil)
	if e.Cost != nil {
		t.Errorf("a summary without cost metadata kept a cost: %+v", e.Cost)
	}
	e.SetShift([]ShiftRow{{Shift: "degree", Level: 1}})
	if !e.Shifted || len(e.Shift) != 1 {
		t.Errorf("after SetShift: %+v", e)
	}
}

// report.md lays the tables out in list order under the manifest's heading; the page in
// PageOrder, a table without one after the others.
func TestTablesInOrder(t *testing.T) {
	saved := Tables
	t.Cleanup(func() { Tables = saved })
	Tables = append(Tables[:len(Tables):len(Tables)], Table{Name: "extra", Build: func(entries []Entry) Layout {
		return Layout{Grids: []Grid{{Title: "Extra", Head: []string{"method", "n"}, Text: 1, Rows: [][]string{{"x", "1"}}}}}
	}})
	e := Entry{Config: "fedavg", Method: "fedavg"}
	e.SetSummary(Summary{Clients: 2, Pooled: 0.5}, map[string]string{"flops": "1"})
	e.SetShift([]ShiftRow{{Shift: "degree", Level: 1, Mean: 0.5}})
	built := Build([]Entry{e, {Config: "local", Method: "local"}})
	md := Markdown("tiny", " Two methods. ", built)
	if !strings.HasPrefix(md, "## tiny\n\nTwo methods.\n\n| method | seeds | clients |") {
		t.Errorf("report.md does not open with the heading and the runs table:\n%s", md)
	}
	at := func(s string) int {
		i := strings.Index(md, s)
		if i < 0 {
			t.Errorf("report.md lacks %q:\n%s", s, md)
		}
		return i
	}
	if !(at("| fedavg | 1 | 2 |") < at("### Cost per client") && at("### Cost per client") < at("### Accuracy under shift") && at("### Accuracy under shift") < at("### Extra")) {
		t.Errorf("report.md's tables are out of list order:\n%s", md)
	}
	if strings.Contains(md, "| local |") {
		t.Errorf("a run not evaluated is in the tables:\n%s", md)
	}
	var names []string
	for _, b := range PageOrdered(built) {
		names = append(names, b.Name)
	}
	if strings.Join(names, " ") != "runs shift cost extra" {
		t.Errorf("page order %v, want runs shift cost extra", names)
	}
	if runs := built[0]; runs.Data == nil || runs.Data.NumRows() != 1 || runs.Grids[0].PageHead[0] != "configuration" {
		t.Errorf("runs table: %+v", runs)
	}
}

// Without entries the tables have nothing to show.
func TestTablesWithoutEntries(t *testing.T) {
	for _, b := range Build([]Entry{{Config: "fedavg"}}) {
		if len(b.Grids) != 0 || b.Data != nil {
			t.Errorf("%s: %+v from a run with no result", b.Name, b.Layout)
		}
	}
}

// A grid without a title has no heading, and Text 0 aligns its first column as words.
func TestGridMarkdown(t *testing.T) {
	g := Grid{Head: []string{"method", "a", "b"}, Rows: [][]string{{"x", "1", "2"}}}
	if got, want := g.Markdown(), "| method | a | b |\n|---|---:|---:|\n| x | 1 | 2 |\n"; got != want {
		t.Errorf("Markdown = %q, want %q", got, want)
	}
	g.Title, g.Text = "T", 2
	if got, want := g.Markdown(), "\n### T\n\n| method | a | b |\n|---|---|---:|\n| x | 1 | 2 |\n"; got != want {
		t.Errorf("Markdown = %q, want %q", got, want)
	}
}
