// Package watch reads the live state of a manifest's runs — what status --watch prints and
// serve's page draws — from the progress journals train stages publish (package live) in a
// store directory and on a remote: each run's state (waiting, training, finished, failed,
// interrupted, stalled), who holds it, its journal, and the earlier rounds of a run that
// extends a cached shorter one.
package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/live"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
)

// The states status --watch and serve give a run (its train stage), beside live's.
const (
	Waiting  = "waiting"
	Training = "training"
)

// Run is one run of a watched manifest as a reader sees it now. Its JSON form is what
// status --watch --json and serve's /runs.json print.
type Run struct {
	Manifest string `json:"manifest"`
	// Cell is the run's label without its seed (its seeds form one band); Label with it.
	Cell  string `json:"cell"`
	Label string `json:"label"`
	Seed  int64  `json:"seed"`
	Key   string `json:"key"`
	// State is waiting, training, finished, failed, interrupted or stalled.
	State string `json:"state"`
	// Detail says more: the round and ETA, who took the stage over, why it stalled.
	Detail  string        `json:"detail,omitempty"`
	Journal *live.Journal `json:"journal,omitempty"`

	// Method is the run's registered method name, Display the name its paper writes.
	Method  string `json:"-"`
	Display string `json:"-"`
	// Rounds is the run's train.rounds.
	Rounds int `json:"-"`
	// Carried are the points of the earlier, shorter runs this run extends, for the rounds
	// its own journal does not hold (none for a run that extends nothing).
	Carried []live.Point `json:"-"`
	// Holder names who trains the run now ("" when no one does: waiting, ended or stalled).
	Holder string `json:"-"`
	// Node is the run's train stage.
	Node *pipeline.Node `json:"-"`
}

// Watch reads the progress of the train stages of some graphs from a store directory
// and, optionally, a remote. It never opens the store while a run holds it, except once
// through a snapshot (artifacts.OpenReader) to learn which runs were cached before it
// started and which shorter runs each may extend; after that it reads only the journals (small files, objects of the remote).
type Watch struct {
	// Dir is the store directory, Remote the remote (nil: none), Graphs the manifests'.
	Dir    string
	Remote *remote.Remote
	Graphs []*pipeline.Graph
	// cached holds the keys whose results were in the store or the remote at the start.
	cached map[string]bool
	// earlier holds, by stage key, the cached shorter runs the stage may extend.
	earlier map[string][]pipeline.EarlierRun
	host    string
}

// Open looks up, once, which train stages of the graphs are already computed and which
// shorter runs each may extend; logf receives the store's messages.
func Open(ctx context.Context, dir string, rem *remote.Remote, graphs []*pipeline.Graph, logf func(string, ...any)) (*Watch, error) {
	w := &Watch{Dir: dir, Remote: rem, Graphs: graphs, cached: map[string]bool{}, earlier: map[string][]pipeline.EarlierRun{}}
	w.host, _ = os.Hostname()
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err == nil {
		store, err := artifacts.OpenReader(dir, artifacts.Options{LockTimeout: -1, Logf: logf})
		if err != nil {
			return nil, err
		}
		for _, n := range w.trainNodes() {
			if _, ok, err := store.ActionMeta(artifacts.Digest(n.Key)); err == nil && ok {
				w.cached[n.Key.String()] = true
			}
			if e := pipeline.EarlierRuns(store, n); len(e) > 0 {
				w.earlier[n.Key.String()] = e
			}
		}
		store.Close()
	}
	if rem != nil {
		for _, n := range w.trainNodes() {
			if w.cached[n.Key.String()] {
				continue
			}
			ok, err := rem.HasAction(ctx, artifacts.Digest(n.Key))
			if err != nil {
				return nil, err
			}
			w.cached[n.Key.String()] = ok
		}
	}
	return w, nil
}

func (w *Watch) trainNodes() []*pipeline.Node {
	var out []*pipeline.Node
	for _, g := range w.Graphs {
		for _, n := range g.Nodes {
			if n.Kind == manifest.KindTrain && n.Run != nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// journals reads the journals of the stages (and of the shorter runs they extend) in the
// store directory and every journal of the remote, keeping for each stage the one written
// last (the remote's when it is the newer: another worker's).
func (w *Watch) journals(ctx context.Context) (map[string]*live.Journal, error) {
	out := map[string]*live.Journal{}
	keep := func(j *live.Journal) {
		if old := out[j.Key]; old == nil || j.Updated.After(old.Updated) {
			out[j.Key] = j
		}
	}
	var keys []string
	for _, n := range w.trainNodes() {
		keys = append(keys, n.Key.String())
		for _, e := range w.earlier[n.Key.String()] {
			keys = append(keys, e.Key.String())
		}
	}
	for _, key := range keys {
		if b, err := os.ReadFile(live.Path(w.Dir, key)); err == nil {
			if j, err := live.Decode(b); err == nil {
				keep(j)
			}
		}
	}
	if w.Remote != nil {
		objs, err := w.Remote.Progress(ctx)
		if err != nil {
			return nil, err
		}
		for _, b := range objs {
			if j, err := live.Decode(b); err == nil {
				keep(j)
			}
		}
	}
	return out, nil
}

// Runs is every train stage's state now, in graph order.
func (w *Watch) Runs(ctx context.Context) ([]Run, error) {
	js, err := w.journals(ctx)
	if err != nil {
		return nil, err
	}
	var out []Run
	for _, g := range w.Graphs {
		for _, n := range g.Nodes {
			if n.Kind != manifest.KindTrain || n.Run == nil {
				continue
			}
			key := n.Key.String()
			label := n.Run.Label()
			r := Run{Manifest: g.Manifest.File, Label: label, Cell: strings.TrimSuffix(label, fmt.Sprintf(" seed=%d", n.Run.Seed)),
				Seed: n.Run.Seed, Key: key, Journal: js[key], Method: n.Run.MethodName, Display: manifest.DisplayName(n.Run.MethodName),
				Rounds: n.Run.Train.Rounds, Node: n}
			r.Carried = Carry(r.Journal, w.earlier[key], js)
			if err := w.judge(ctx, &r); err != nil {
				return nil, err
			}
			r.Holder = w.holder(r)
			out = append(out, r)
		}
	}
	return out, nil
}

// wallText is a finished run's wall time: own seconds, or for a run that continues a cached
// shorter run (carried: the rounds it took from that run's journal) the total over both,
// with the parts beside it ("1m12s: 41s for rounds 1–20, 31s for 21–25").
func wallText(own float64, carried []live.Point) string {
	d := func(s float64) string { return live.FormatDuration(time.Duration(s * float64(time.Second))) }
	if len(carried) == 0 {
		return d(own)
	}
	before := carried[len(carried)-1]
	return fmt.Sprintf("%s: %s for rounds 1–%d, %s for the rest", d(before.Seconds+own), d(before.Seconds), before.Round, d(own))
}

// judge sets a run's state from its journal, the store's cache and, for a run still
// training, whether its writer is alive: a local process that no longer exists, or a
// worker whose lease is no longer renewed, has stalled.
func (w *Watch) judge(ctx context.Context, r *Run) error {
	j := r.Journal
	switch {
	case j == nil && w.cached[r.Key]:
		r.State = live.Finished
		return nil
	case j == nil:
		r.State = Waiting
		return nil
	case j.State == live.Finished || j.State == live.Failed || j.State == live.Interrupted:
		r.State = j.State
		if last := j.Last(); last.Round > 0 {
			r.Detail = fmt.Sprintf("round %d of %d in %s", last.Round, j.Rounds, wallText(last.Seconds, r.Carried))
		}
		if j.State == live.Failed {
			r.Detail = strings.TrimPrefix(r.Detail+": "+j.Error, ": ")
		}
		if j.State == live.Interrupted && w.cached[r.Key] {
			r.State = live.Finished
		}
		return nil
	}
	r.State = Training
	last := j.Last()
	r.Detail = fmt.Sprintf("round %d of %d", last.Round, j.Rounds)
	if eta := j.ETA(); eta > 0 {
		r.Detail += ", ETA " + live.FormatDuration(eta.Round(time.Second))
	}
	if j.TookOverFrom != "" {
		r.Detail += ", taken over from " + j.TookOverFrom
	}
	why, err := w.stalled(ctx, j)
	if err != nil {
		return err
	}
	if why != "" {
		r.State, r.Detail = live.Stalled, fmt.Sprintf("at round %d of %d: %s", last.Round, j.Rounds, why)
	}
	return nil
}

// stalled says why a journal still marked running has no live writer ("" if it has one).
func (w *Watch) stalled(ctx context.Context, j *live.Journal) (string, error) {
	if w.Remote != nil && j.Leased {
		l, err := w.Remote.LeaseOf(ctx, mustDigest(j.Key), time.Duration(j.LeaseTTL*float64(time.Second)))
		if err != nil {
			return "", err
		}
		switch {
		case !l.Held:
			return fmt.Sprintf("%s holds no lease on it", j.Holder), nil
		case l.Stale():
			return fmt.Sprintf("the lease of %s was last renewed %s ago (TTL %s)", l.Holder, live.FormatDuration(l.Age.Round(time.Second)), l.TTL), nil
		}
		return "", nil
	}
	if j.Host == w.host && j.PID > 0 {
		if !processAlive(j.PID) {
			return fmt.Sprintf("its process %s is gone", j.Holder), nil
		}
		return "", nil
	}
	// Another host, no lease to ask: silent for ten minutes and for five rounds' time.
	quiet := time.Since(j.Updated)
	limit := 10 * time.Minute
	if last := j.Last(); last.Round > 0 {
		limit = max(limit, time.Duration(5*last.Seconds/float64(last.Round)*float64(time.Second)))
	}
	if quiet > limit {
		return fmt.Sprintf("no news from %s for %s", j.Holder, live.FormatDuration(quiet.Round(time.Second))), nil
	}
	return "", nil
}

// mustDigest parses a journal's key (a hex digest; zero when malformed, which no lease has).
func mustDigest(s string) artifacts.Digest {
	d, _ := artifacts.ParseDigest(s)
	return d
}

// processAlive reports whether process pid of this host exists and is not a zombie (a
// killed process its parent has not reaped yet).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		_, noProc := os.Stat("/proc/self/stat")
		return noProc != nil // without /proc (not Linux), kill's answer; with it, gone
	}
	// The state follows the command name, which is in parentheses and may hold spaces.
	if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z' && b[i+2] != 'X'
	}
	return true
}
