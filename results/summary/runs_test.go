package summary

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/results"
)

func TestMarkdownFoldsSeedsPerConfig(t *testing.T) {
	entries := []Entry{
		{Config: "fedavg", Method: "fedavg", Seed: 0, Summary: Summary{Clients: 10, Mean: 0.5, Std: 0.1, Pooled: 0.6, Best: Best{Pooled: 0.7, PooledRound: 4}}},
		{Config: "local", Method: "local", Seed: 0, Summary: Summary{Clients: 10, Mean: 0.9, Std: 0.05, Pooled: 0.92, Best: Best{Pooled: 0.95, PooledRound: 3}}},
		{Config: "fedavg", Method: "fedavg", Seed: 1, Summary: Summary{Clients: 10, Mean: 0.7, Std: 0.3, Pooled: 0.8, Best: Best{Pooled: 0.9, PooledRound: 5}}},
	}
	md := Markdown("t", "", []Built{{Layout: runsTable(evaluated(entries))}})
	lines := strings.Split(strings.TrimSpace(md), "\n")
	rows := lines[len(lines)-2:]
	if !strings.HasPrefix(rows[0], "| fedavg | 2 | 10 | 60.00 ± 20.00 | 70.00 ± 10.00 | 80.00 @ 4,5 |") {
		t.Errorf("fedavg row: %q", rows[0])
	}
	if !strings.HasPrefix(rows[1], "| local | 1 | 10 | 90.00 ± 5.00 | 92.00 | 95.00 @ 3 |") {
		t.Errorf("local row: %q", rows[1])
	}
}

// The runs table has a row per entry, seeds apart, its run column named as every other
// table's.
func TestRuns(t *testing.T) {
	e := Entry{Run: "fedavg seed=2", Config: "fedavg", Method: "fedavg", Seed: 2, Summary: Summary{Clients: 10, Mean: 0.5, Std: 0.1, Pooled: 0.6,
		Best: Best{Pooled: 0.7, PooledRound: 4}}}
	got := Runs([]Entry{e, e})
	want := results.Run{Run: "fedavg seed=2", Config: "fedavg", Method: "fedavg", Seed: 2, Clients: 10, Mean: 0.5, Std: 0.1, Pooled: 0.6, BestPooled: 0.7}
	if len(got) != 2 || got[0] != want || got[1] != want {
		t.Errorf("Runs = %+v, want 2 × %+v", got, want)
	}
}

func TestShiftGridsFoldSeedsAndMarkMissingCells(t *testing.T) {
	entries := []Entry{
		{Config: "fedavg", Shifted: true, Shift: []ShiftRow{{Shift: "degree", Level: 0, Mean: 0.5, Std: 0.1}, {Shift: "fog", Level: 1, Mean: 0.4, Std: 0.2}}},
		{Config: "fedavg", Shifted: true, Shift: []ShiftRow{{Shift: "degree", Level: 0, Mean: 0.7, Std: 0.3}, {Shift: "fog", Level: 1, Mean: 0.2, Std: 0.2}}},
		{Config: "fedprox"}, // no shift summary: no row
		{Config: "local", Shifted: true, Shift: []ShiftRow{{Shift: "degree", Level: 0.5, Mean: 0.9, Std: 0}}},
	}
	g := ShiftGrids(entries)
	if len(g) != 2 {
		t.Fatalf("%d grids, want degrees and corruptions", len(g))
	}
	want := [][]string{{"fedavg", "60.00 ± 20.00", "—"}, {"local", "—", "90.00 ± 0.00"}}
	if fmt.Sprint(g[0].Head) != "[method d = 0 d = 0.5]" || fmt.Sprint(g[0].Rows) != fmt.Sprint(want) {
		t.Errorf("degree grid %v %v, want rows %v", g[0].Head, g[0].Rows, want)
	}
	want = [][]string{{"fedavg", "fog", "30.00 ± 20.00"}, {"local", "fog", "—"}}
	if g[1].Text != 2 || fmt.Sprint(g[1].Rows) != fmt.Sprint(want) {
		t.Errorf("corruption grid %v, want %v", g[1].Rows, want)
	}
	if md := g[1].Markdown(); !strings.Contains(md, "| method | corruption | 1 |\n|---|---|---:|\n| fedavg | fog | 30.00 ± 20.00 |") {
		t.Errorf("markdown:\n%s", md)
	}
}

// Real CIFAR-10-C rows get their own grid, apart from the Go-generated corruption of the
// same name, titled with the share of own counterparts; the counts are read from the table.
func TestShiftGridsCIFAR10C(t *testing.T) {
	sum := &table.Table{Columns: []table.Column{
		table.StringCol("shift", []string{"fog", "cifar10c:fog", "cifar10c:fog"}),
		table.Float64Col("level", []float64{1, 1, 5}),
		table.Float64Col("accuracy_client_mean", []float64{0.5, 0.4, 0.2}),
		table.Float64Col("accuracy_client_std", []float64{0, 0, 0}),
		table.Float64Col("accuracy_pooled", []float64{0.5, 0.4, 0.2}),
		table.Int64Col("cifar10c_own", []int64{0, 1, 1}),
		table.Int64Col("cifar10c_drawn", []int64{0, 3, 3}),
	}, Meta: map[string]string{"config": "fedavg"}}
	b, err := table.Encode(sum)
	if err != nil {
		t.Fatal(err)
	}
	rows, meta, err := results.Decode[ShiftRow](b)
	if err != nil {
		t.Fatal(err)
	}
	e := Entry{Config: meta["config"]}
	e.SetShift(rows)
	md := Markdown("t", "", []Built{{Layout: shiftTable([]Entry{e})}})
	for _, want := range []string{"Accuracy under corruption, by severity", "| fedavg | fog | 50.00 ± 0.00 |",
		"Accuracy under CIFAR-10-C (the release's files)", "25.0% of test samples are their own CIFAR-10-C version",
		"| fedavg | fog | 40.00 ± 0.00 | 20.00 ± 0.00 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// Tables print each configuration by its display form, while seeds still fold by the
// configuration itself: two configurations that share a display form stay two rows.
func TestTablesPrintDisplayNames(t *testing.T) {
	entries := []Entry{
		{Config: "fedavg lr=0.1", Display: "FedAvg lr=0.1", Method: "fedavg", Summary: Summary{Clients: 2, Pooled: 0.5}},
		{Config: "fedavg lr=0.1", Display: "FedAvg lr=0.1", Method: "fedavg", Seed: 1, Summary: Summary{Clients: 2, Pooled: 0.7}},
		{Config: "mine", Display: "FedAvg lr=0.1", Method: "fedavg", Summary: Summary{Clients: 2, Pooled: 0.9}},
		{Config: "local", Method: "local", Summary: Summary{Clients: 2, Pooled: 0.9}},
	}
	md := Markdown("t", "", []Built{{Layout: runsTable(evaluated(entries))}})
	for _, want := range []string{"| FedAvg lr=0.1 | 2 | 2 |", "| FedAvg lr=0.1 | 1 | 2 |", "| local | 1 | 2 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| fedavg lr=0.1 |") {
		t.Errorf("markdown prints the label, not the display name:\n%s", md)
	}
	shift := ShiftGrids([]Entry{{Config: "fedavg lr=0.1", Display: "FedAvg lr=0.1", Shifted: true, Shift: []ShiftRow{{Shift: "degree", Level: 1, Mean: 0.5}}},
		{Config: "local", Shifted: true, Shift: []ShiftRow{{Shift: "degree", Level: 1, Mean: 0.6}}}})
	if len(shift) != 1 || shift[0].Rows[0][0] != "FedAvg lr=0.1" || shift[0].Rows[1][0] != "local" {
		t.Errorf("shift grid rows: %+v", shift)
	}
	cost, _ := CostGrid([]Entry{{Config: "fedavg", Display: "FedAvg", Method: "fedavg", Cost: &Cost{MBUp: 1, MBDown: 1, FLOPs: 1, Reference: true}}})
	if cost.Rows[0][0] != "FedAvg" {
		t.Errorf("cost grid row: %q", cost.Rows[0])
	}
}

// evaluated marks entries as evaluated, as SetSummary does.
func evaluated(entries []Entry) []Entry {
	out := make([]Entry, len(entries))
	for i, e := range entries {
		e.Evaluated = true
		out[i] = e
	}
	return out
}
