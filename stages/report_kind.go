package stages

import (
	"context"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/results/summary"
)

func (env *Env) report(_ context.Context, sc Context) (Outputs, error) {
	entries := make([]summary.Entry, len(sc.Runs()))
	var costs []summary.CostEntry
	for i, r := range sc.Runs() {
		b, err := sc.InputAt(manifest.KindEvaluate, i, results.OutEvaluateSummary)
		if err != nil {
			return nil, err
		}
		s, meta, err := results.DecodeOne[results.Summary](b)
		if err != nil {
			return nil, err
		}
		entries[i] = summary.Entry{Run: r.Label(), Config: r.Config(), Display: manifest.DisplayLabel(r.Config(), r.Method), Method: r.Method, Seed: r.Seed, Summary: s}
		if c, ok := summary.CostEntryFromSummary(meta, r.Config(), r.Method, manifest.CostReference(r.Method)); ok {
			c.Display = entries[i].Display
			costs = append(costs, c)
		}
	}
	m := sc.Manifest()
	md := summary.Markdown(m.Name, m.EffectiveDescription(), entries) + summary.CostMarkdown(costs)
	display := map[string]string{} // a shift stage's config → its printed form
	for _, e := range entries {
		display[e.Config] = e.Display
	}
	var shifts []summary.ShiftEntry
	for i := range sc.NumInputs(manifest.KindShift) {
		b, err := sc.InputAt(manifest.KindShift, i, results.OutShiftSummary)
		if err != nil {
			return nil, err
		}
		e, err := summary.DecodeShiftEntry(b)
		if err != nil {
			return nil, err
		}
		e.Display = display[e.Config]
		shifts = append(shifts, e)
	}
	md += summary.ShiftMarkdown(shifts)
	runs, err := results.Encode(summary.Runs(entries), nil)
	if err != nil {
		return nil, err
	}
	return Outputs{results.OutReportMarkdown: []byte(md), results.OutReportRuns: runs}, nil
}
