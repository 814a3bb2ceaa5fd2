package watch

import (
	"fmt"
	"sort"

	"github.com/fedpipe/fedpipe/live"
	"github.com/fedpipe/fedpipe/pipeline"
)

// Carry is the rounds a run that extends shorter cached runs takes from their journals:
// for each round before the first its own journal holds (every round when it has none),
// the point of the longest earlier run that has it, in round order. A run resumed from
// its own checkpoint needs none of this (its journal carries its points itself); earlier
// lists the shorter runs longest first (pipeline.EarlierRuns), js the journals by key.
func Carry(own *live.Journal, earlier []pipeline.EarlierRun, js map[string]*live.Journal) []live.Point {
	first := int(^uint(0) >> 1)
	if own != nil && len(own.Points) > 0 {
		first = own.Points[0].Round
	}
	var out []live.Point
	for _, e := range earlier {
		j := js[e.Key.String()]
		if j == nil {
			continue
		}
		next := first
		for _, p := range j.Points {
			if p.Round < first && p.Round <= e.Rounds {
				out = append(out, p)
				next = min(next, p.Round)
			}
		}
		first = next
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Round < out[b].Round })
	return out
}

// Points is a run's curve: its carried rounds, then its own journal's.
func (r Run) Points() []live.Point {
	if r.Journal == nil {
		return r.Carried
	}
	if len(r.Carried) == 0 {
		return r.Journal.Points
	}
	return append(append([]live.Point(nil), r.Carried...), r.Journal.Points...)
}

// holder names who trains a run now: a worker of the remote under its lease, this
// machine's process, or another host's; "" when no one does (waiting, ended, stalled).
func (w *Watch) holder(r Run) string {
	j := r.Journal
	if r.State != Training || j == nil {
		return ""
	}
	switch {
	case j.Leased:
		return fmt.Sprintf("worker %s (lease)", j.Holder)
	case j.Host == w.host && j.PID > 0:
		return fmt.Sprintf("this machine (pid %d)", j.PID)
	}
	return j.Holder
}

// HolderText says who holds a run for a reader: its holder, or why no one does.
func HolderText(r Run) string {
	switch {
	case r.Holder != "":
		return r.Holder
	case r.State == live.Stalled && r.Journal != nil:
		return "none (" + r.Journal.Holder + " stalled)"
	case r.State == live.Finished:
		return "none (done)"
	}
	return "none (" + r.State + ")"
}
