package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
)

// A partial result — a stage's action kept without some outputs, as `fedpipe push
// --results-only` keeps train stages without their models and states (remote.Keep) —
// serves whoever reads what it kept: verify, report, ls and export read tables only, and
// a cached partial stage whose dependents are cached too is never recomputed. A stage that
// runs, though, gets whole inputs: before it starts, runStage recomputes each input whose
// result is partial (completeInputs), which replaces the partial action in the local store
// (and in the remote, by the usual push) with a complete one. An omitted output is never
// read as missing or empty: StageContext.Input only sees actions that have it.

// partialNote says which outputs a partial action lacks, for reasons and messages.
func partialNote(a artifacts.Action) string {
	names := remote.Omitted(a)
	list := strings.Join(names[:min(len(names), 3)], ", ")
	if len(names) > 3 {
		list += fmt.Sprintf(" and %d more", len(names)-3)
	}
	return "(results only: without " + list + ")"
}

// completeInputs recomputes, inputs first, every input of n whose action in actions is
// partial, so that n reads complete results. The stages it runs are remembered in
// e.redone, whose results replace their cached entries in what Execute returns.
func (e *Executor) completeInputs(ctx context.Context, g *Graph, n *Node, actions map[*Node]artifacts.Action, index, total int) error {
	for _, in := range n.Inputs {
		a, ok := actions[in]
		if !ok || !remote.Partial(a) {
			continue
		}
		reason := fmt.Sprintf("%s needs it whole, and its cached result is partial %s", n.Name, partialNote(a))
		res, err := e.runStage(ctx, g, in, reason, actions, index, total)
		if err != nil {
			return err
		}
		e.mu.Lock()
		e.redone = append(e.redone, res)
		e.mu.Unlock()
	}
	return nil
}

// patchRedone replaces, in results, the entry of every stage completeInputs recomputed.
func (e *Executor) patchRedone(results []StageResult) []StageResult {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.redone {
		found := false
		for i := range results {
			if results[i].Key == r.Key {
				results[i], found = r, true
			}
		}
		if !found {
			results = append(results, r)
		}
	}
	e.redone = nil
	return results
}
