package stages

import (
	"context"

	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages/report"
)

func (env *Env) report(_ context.Context, sc Context) (Outputs, error) {
	entries := make([]report.Entry, len(sc.Runs()))
	var costs []report.CostEntry
	for i, r := range sc.Runs() {
		b, err := sc.Input(i, "summary")
		if err != nil {
			return nil, err
		}
		s, meta, err := results.DecodeOne[results.Summary](b)
		if err != nil {
			return nil, err
		}
		entries[i] = report.Entry{Run: r.Label(), Config: r.Config(), Method: r.Method, Seed: r.Seed, Summary: s}
		if c, ok := report.CostEntryFromSummary(meta, r.Config(), r.Method); ok {
			costs = append(costs, c)
		}
	}
	m := sc.Manifest()
	md := report.Markdown(m.Name, m.Description, entries) + report.CostMarkdown(costs)
	var shifts []report.ShiftEntry
	for i := len(sc.Runs()); i < sc.NumInputs(); i++ {
		b, err := sc.Input(i, "summary")
		if err != nil {
			return nil, err
		}
		e, err := report.DecodeShiftEntry(b)
		if err != nil {
			return nil, err
		}
		shifts = append(shifts, e)
	}
	md += report.ShiftMarkdown(shifts)
	runs, err := results.Encode(report.Runs(entries), nil)
	if err != nil {
		return nil, err
	}
	return Outputs{"report.md": []byte(md), "runs": runs}, nil
}
