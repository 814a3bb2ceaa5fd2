package stages

import (
	"context"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/results/summary"
)

// report lays every table of summary.Tables out from the runs' evaluations and shifts:
// their grids make report.md, and each data table is an output of the table's name.
func (env *Env) report(_ context.Context, sc Context) (Outputs, error) {
	entries := make([]summary.Entry, len(sc.Runs()))
	for i, r := range sc.Runs() {
		b, err := sc.InputAt(manifest.KindEvaluate, i, results.OutEvaluateSummary)
		if err != nil {
			return nil, err
		}
		s, meta, err := results.DecodeOne[results.Summary](b)
		if err != nil {
			return nil, err
		}
		entries[i] = summary.EntryOf(r, r.Config())
		entries[i].SetSummary(s, meta)
	}
	// A shift stage serves the run its summary names; a stage shared by another label
	// (pipeline's Node.Also) is reported once, under the run it was planned for.
	for i := range sc.NumInputs(manifest.KindShift) {
		b, err := sc.InputAt(manifest.KindShift, i, results.OutShiftSummary)
		if err != nil {
			return nil, err
		}
		rows, meta, err := results.Decode[summary.ShiftRow](b)
		if err != nil {
			return nil, err
		}
		at := -1
		for j, e := range entries {
			if e.Run == meta["run"] && !e.Shifted {
				at = j
				break
			}
		}
		if at < 0 { // a summary that names no run of the report: a row of its own
			e := summary.Entry{Config: meta["config"]}
			for _, x := range entries {
				if x.Config == e.Config {
					e.Display = x.Display
				}
			}
			entries, at = append(entries, e), len(entries)
		}
		entries[at].SetShift(rows)
	}
	m := sc.Manifest()
	built := summary.Build(entries)
	out := Outputs{results.OutReportMarkdown: []byte(summary.Markdown(m.Name, m.EffectiveDescription(), built))}
	for _, t := range built {
		if t.Data == nil {
			continue
		}
		b, err := table.Encode(t.Data)
		if err != nil {
			return nil, err
		}
		out[t.Name] = b
	}
	return out, nil
}
