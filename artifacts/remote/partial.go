package remote

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
)

// A partial action is a stage result kept without some of its outputs (fedpipe push
// --results-only keeps the tables and leaves out models and states). Its Outputs name
// only the outputs kept, and Meta[MetaOmitted] lists the others, sorted and separated by
// commas. In the remote its entry has "v":2, so that a fedpipe that predates partial
// entries finds it unreadable and recomputes the stage instead of taking it for whole. A
// partial action serves readers of what it kept; whatever needs an omitted output must
// recompute the stage (pipeline does, see its partial.go).
const MetaOmitted = "omitted"

// partialRecordVersion is the "v" of a partial action entry.
const partialRecordVersion = 2

// Omitted returns the names of the outputs a partial action left out (nil for a complete
// one).
func Omitted(a artifacts.Action) []string {
	s := a.Meta[MetaOmitted]
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// Partial reports whether a lacks some of its stage's outputs.
func Partial(a artifacts.Action) bool { return a.Meta[MetaOmitted] != "" }

// Keep returns a without the outputs for which keep is false, those marked omitted (with
// any a omitted already). A copy is returned; a itself is not changed. With nothing to
// leave out, a comes back as it is.
func Keep(a artifacts.Action, keep func(output string) bool) artifacts.Action {
	var omitted []string
	for name := range a.Outputs {
		if !keep(name) {
			omitted = append(omitted, name)
		}
	}
	if len(omitted) == 0 {
		return a
	}
	out := artifacts.Action{Outputs: map[string]artifacts.Digest{}, Meta: maps.Clone(a.Meta)}
	if out.Meta == nil {
		out.Meta = map[string]string{}
	}
	for name, d := range a.Outputs {
		if keep(name) {
			out.Outputs[name] = d
		}
	}
	omitted = append(omitted, Omitted(a)...)
	sort.Strings(omitted)
	out.Meta[MetaOmitted] = strings.Join(slices.Compact(omitted), ",")
	return out
}

// PushPartialAction is PushAction of Keep(a, keep): the outputs keep refuses are neither
// uploaded nor named, and the entry says they were left out. It returns the action as
// recorded.
func (r *Remote) PushPartialAction(ctx context.Context, store *artifacts.Store, key artifacts.Digest, a artifacts.Action, keep func(output string) bool) (artifacts.Action, Transfer, error) {
	kept := Keep(a, keep)
	t, err := r.PushAction(ctx, store, key, kept)
	return kept, t, err
}
