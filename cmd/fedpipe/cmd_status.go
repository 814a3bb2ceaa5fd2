package main

import (
	"fmt"
	"io"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
)

// cmdStatus is `fedpipe status MANIFEST`: whether every stage's result is cached and, if
// not, why it would run (statusPlan); with --watch, the runs followed while they train
// (cmdStatusWatch, watch.go).
var cmdStatus = &command{
	name: "status",
	overview: []string{"status MANIFEST [flags]   say which stages are cached and why others would run",
		"status MANIFEST... --watch   follow the runs while they train: state, round, ETA, latest figures"},
	usageLine: "fedpipe status MANIFEST [flags]",
	long:      "Says, for every stage of MANIFEST, whether its result is cached, and if not, why it would run.",
	groups:    statusGroups,
	flags:     withFlags(statusPlan),
	form: func(args []string) *command {
		if wantsWatch(args) {
			return cmdStatusWatch
		}
		return nil
	},
}

// printPlan prints a plan (status, run --dry-run): a line per stage, or with asJSON one
// object whose stages are rows of the form a run reports (pipeline.StageResult); status
// says stale or missing where run --dry-run says run.
func printPlan(status bool, m *manifest.Manifest, dir, backend string, plan []pipeline.PlanEntry, asJSON bool, w io.Writer) error {
	var rows []pipeline.StageResult
	stale, remote := 0, 0
	for _, p := range plan {
		state := p.State
		if state == pipeline.StateRemote {
			remote++
		}
		if state == pipeline.StateRun {
			stale++
			if status {
				state = "stale" // it ran, but something changed since
				if p.NeverRan {
					state = "missing"
				}
			}
		}
		rows = append(rows, pipeline.StageResult{Kind: p.Node.Kind, Name: p.Node.Name, Key: p.Node.Key.String(), State: state, Reason: p.Reason})
	}
	if asJSON {
		return writeJSON(w, map[string]any{"manifest": m.File, "store": dir, "backend": model.BackendID(backend), "stages": rows})
	}
	for _, r := range rows {
		line := fmt.Sprintf("%-7s %s  %s", r.State, r.Key[:12], r.Name)
		if r.Reason != "" {
			line += "  (" + r.Reason + ")"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "%d of %d stages cached", len(plan)-stale-remote, len(plan))
	if remote > 0 {
		fmt.Fprintf(w, ", %d in the remote", remote)
	}
	fmt.Fprintf(w, ", %d would run (store %s)\n", stale, dir)
	return nil
}
