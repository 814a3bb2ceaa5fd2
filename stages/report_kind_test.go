package stages

import (
	"context"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/results"
)

// reportContext is what the report stage reads: its runs, one evaluate summary each, and
// the shift summaries.
type reportContext struct {
	Context // the methods the report stage does not call
	m       *manifest.Manifest
	runs    []*manifest.Run
	evals   [][]byte
	shifts  [][]byte
}

func (c reportContext) Manifest() *manifest.Manifest { return c.m }
func (c reportContext) Runs() []*manifest.Run        { return c.runs }
func (c reportContext) NumInputs(from string) int {
	if from == manifest.KindShift {
		return len(c.shifts)
	}
	return len(c.evals)
}
func (c reportContext) InputAt(from string, i int, name string) ([]byte, error) {
	if from == manifest.KindShift {
		return c.shifts[i], nil
	}
	return c.evals[i], nil
}

// The report stage lays every run out in the runs table and its data table; a shift stage
// shared by two labels is reported once, under the run it names, and a shift summary that
// names no run of the report keeps a row of its own.
func TestReportTables(t *testing.T) {
	x0 := &manifest.Run{MethodName: "x", Method: "fedavg", Seed: 0}
	y0 := &manifest.Run{MethodName: "y", Method: "fedavg", Seed: 0}
	x1 := &manifest.Run{MethodName: "x", Method: "fedavg", Seed: 1}
	c := reportContext{m: &manifest.Manifest{Name: "dup"}, runs: []*manifest.Run{x0, y0, x1}}
	for i := range c.runs {
		b, err := results.Encode([]results.Summary{{Clients: 2, TestSamples: 10, Mean: 0.5, Pooled: 0.1 * float64(i+1)}},
			map[string]string{"flops": "1e6", "mb_up": "1", "mb_down": "2"})
		if err != nil {
			t.Fatal(err)
		}
		c.evals = append(c.evals, b)
	}
	for _, meta := range []map[string]string{{"run": x0.Label(), "config": "x"}, {"run": x1.Label(), "config": "x"}, {"config": "z"}} {
		b, err := results.Encode([]results.ShiftSummary{{Shift: "degree", Level: 1, Mean: 0.25}}, meta)
		if err != nil {
			t.Fatal(err)
		}
		c.shifts = append(c.shifts, b)
	}
	out, err := (&Env{}).report(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	md := string(out[results.OutReportMarkdown])
	for _, want := range []string{"## dup\n\n| method | seeds |", "\n| x | 2 | 2 | 50.00 ± 0.00 | 20.00 ± 10.00 |", "\n| y | 1 | 2 |",
		"### Cost per client", "| x | 1.000 (1.00×) | 2.000 (1.00×) | 1e+06 (1.00×) |",
		"### Accuracy under shift degree d", "| method | d = 1 |\n|---|---:|\n| x | 25.00 ± 0.00 |\n| z | 25.00 ± 0.00 |\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	rows, _, err := results.Decode[results.Run](out[results.OutReportRuns])
	if err != nil || len(rows) != 3 || rows[1].Run != "y seed=0" || rows[2].Pooled != 0.30000000000000004 {
		t.Errorf("runs table %+v, %v", rows, err)
	}
	if len(out) != 2 {
		t.Errorf("%d outputs, want report.md and runs", len(out))
	}
}
