package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
)

// ReasonFetched is the reason of a cached stage whose result came from the remote.
const ReasonFetched = "fetched from the remote"

// StateRemote marks a planned stage that the remote can serve (status and --dry-run):
// a run fetches its result instead of computing it.
const StateRemote = "remote"

// MarkRemote turns every planned-to-run entry whose result the remote holds (an entry and
// an object per output; the bytes are checked only when fetched) into StateRemote.
func MarkRemote(ctx context.Context, plan []PlanEntry, r *remote.Remote) error {
	for i := range plan {
		if plan[i].State != StateRun {
			continue
		}
		ok, err := r.HasAction(ctx, artifacts.Digest(plan[i].Node.Key))
		if err != nil {
			return err
		}
		if ok {
			plan[i].State = StateRemote
			plan[i].Reason = "in the remote " + r.String() + "; locally: " + plan[i].Reason
		}
	}
	return nil
}

// fetch copies n's result from the remote into the local store when the remote has it
// intact and it is the result of n's cell (CheckIdentity: one that names another cell is an
// error, never a hit), and records it in actions. A corrupt or missing remote object is a miss (the
// stage then runs), and *reason, if the stage runs, says so. ok is false without a remote.
func (e *Executor) fetch(ctx context.Context, n *Node, actions map[*Node]artifacts.Action, why *string) (StageResult, bool, error) {
	if e.Remote == nil {
		return StageResult{}, false, nil
	}
	a, ok, t, err := e.Remote.FetchActionChecked(ctx, e.Store, artifacts.Digest(n.Key), func(a artifacts.Action) error {
		return CheckIdentity(e.Store, n, a)
	})
	var reason string
	if errors.Is(err, artifacts.ErrNotFound) {
		*why = "the remote's copy failed verification (" + err.Error() + ")"
		return StageResult{}, false, nil
	}
	if err != nil || !ok {
		return StageResult{}, false, err
	}
	actions[n] = a
	e.Progress.Logf("fetched %s from %s (%d blobs, %s)", n.Name, e.Remote, t.Objects, byteCount(t.Bytes))
	reason = ReasonFetched
	if remote.Partial(a) {
		reason += " " + partialNote(a)
	}
	return StageResult{Kind: n.Kind, Name: n.Name, Key: n.Key.String(), State: StateCached,
		Reason: reason, Outputs: digestStrings(a.Outputs)}, true, nil
}

// push uploads a stage's result (blobs, then the entry) and drops its remote checkpoint.
// A worker of a split run (whose store may be a job's temporary directory) retries a push
// that fails, with backoff, for up to Split.RetryFor, so that a remote that went away for
// a while does not cost the result.
func (e *Executor) push(ctx context.Context, n *Node, a artifacts.Action) error {
	if e.Remote == nil {
		return nil
	}
	var failed time.Time
	wait := backoff{base: time.Second, limit: time.Minute}
	lease := fenceOf(ctx)
	for {
		var err error
		if lease != nil {
			_, err = lease.PushAction(ctx, e.Store, a)
		} else {
			_, err = e.Remote.PushAction(ctx, e.Store, artifacts.Digest(n.Key), a)
		}
		if err == nil {
			break
		}
		if errors.Is(err, remote.ErrLeaseLost) {
			return err // runLeased says so
		}
		sp := e.Split
		if failed.IsZero() {
			failed = time.Now()
		}
		if ctx.Err() != nil || sp == nil || time.Since(failed) >= sp.retryFor() {
			return fmt.Errorf("pushing the result to the remote: %w", err)
		}
		if wait.cur == 0 {
			e.Progress.Logf("%s: could not push its result (%v); it is in the local store; retrying for up to %v", n.Name, err, sp.retryFor())
		}
		if err := sp.sleepFunc()(ctx, wait.next()); err != nil {
			return err
		}
	}
	if !failed.IsZero() {
		e.Progress.Logf("%s: pushed its result to %s after retrying for %v", n.Name, e.Remote, time.Since(failed).Round(time.Second))
	}
	if err := e.Remote.DeleteCheckpoint(ctx, artifacts.Digest(n.Key)); err != nil {
		e.Progress.Logf("%v", err)
	}
	return nil
}

// pushCheckpoint sends the checkpoint just saved locally (index idx, stored as blob d) to
// the remote, so a worker taking the stage over resumes from it. A failed push is logged,
// not fatal: the stage goes on, and only a takeover would start from an earlier round.
func (sc *StageContext) pushCheckpoint(idx checkpointIndex, d artifacts.Digest) error {
	if sc.remote == nil {
		return nil
	}
	blobs := make([]artifacts.Digest, 0, len(idx.Outputs))
	for _, name := range sortedKeys(idx.Outputs) {
		blobs = append(blobs, idx.Outputs[name])
	}
	cp := remote.Checkpoint{Round: idx.Round, Index: d, Blobs: blobs}
	var err error
	if lease := fenceOf(sc.ctx); lease != nil {
		_, err = lease.PushCheckpoint(sc.ctx, sc.store, cp)
	} else {
		_, err = sc.remote.PushCheckpoint(sc.ctx, sc.store, artifacts.Digest(sc.Node.Key), cp)
	}
	if err != nil {
		if sc.ctx.Err() != nil {
			return sc.ctx.Err()
		}
		if errors.Is(err, remote.ErrLeaseLost) {
			return err // the stage stops; runLeased says so
		}
		if !sc.pushFailing {
			sc.Logf("%s: could not push the checkpoint after round %d: %v; training goes on from the local checkpoints (further failures are not repeated)", sc.Node.Name, idx.Round, err)
		}
		sc.pushFailing = true
		return nil
	}
	if sc.pushFailing {
		sc.Logf("%s: pushed its checkpoint to %s again (after round %d)", sc.Node.Name, sc.remote, idx.Round)
		sc.pushFailing = false
	}
	return nil
}

// LoadCheckpoint returns the latest resume point of this stage, if a previous run of the
// same stage key left one whose blobs all verify: in the local store, or, when it is
// later, in the remote (a worker that died while running the stage pushed it).
func (sc *StageContext) LoadCheckpoint() (round int, blobs map[string][]byte, ok bool) {
	round, blobs, ok = sc.loadLocalCheckpoint()
	if sc.remote == nil {
		return round, blobs, ok
	}
	cp, got, t, err := sc.remote.FetchCheckpoint(sc.ctx, sc.store, artifacts.Digest(sc.Node.Key), round)
	if err != nil {
		sc.Logf("%s: could not read its checkpoint from the remote: %v", sc.Node.Name, err)
	}
	if !got {
		return round, blobs, ok
	}
	if err := sc.store.PutRef(checkpointRef(sc.Node), cp.Index); err != nil {
		return round, blobs, ok
	}
	sc.Logf("%s: fetched the checkpoint after round %d pushed by %s (%s)", sc.Node.Name, cp.Round, cp.Holder, byteCount(t.Bytes))
	if r, b, found := sc.loadLocalCheckpoint(); found {
		return r, b, true
	}
	return round, blobs, ok
}

// SyncOptions says what Push copies besides finished results.
type SyncOptions struct {
	// Checkpoints also copies the resume points of unfinished train stages.
	Checkpoints bool
	// Keep, if set, selects the outputs pushed: the others are left out and the remote's
	// entry is partial (remote.Keep), e.g. tables without models for --results-only.
	Keep func(output string) bool
}

// SyncReport counts what Push or Pull moved.
type SyncReport struct {
	// Results copied, results the destination had already, and results the source lacks.
	Results, Present, Missing int
	// Partial counts the results among Results and Present that lack some outputs
	// (kept by a results-only push).
	Partial int
	// Damaged names the results (stage: why) that the source holds but cannot serve intact
	// (Pull: an unreadable entry, an output missing, corrupt, or decoding past its recorded
	// size in the remote; Push: an output missing or corrupt in the local store); none of
	// them was copied. Missing counts only results the source has no entry of.
	Damaged []string
	// Checkpoints copied (with --checkpoints).
	Checkpoints int
	// Blobs and Bytes sent or received.
	Blobs int
	Bytes int64
}

// Push uploads every stage result of the graphs that the local store holds and the
// remote lacks (blobs, then entries); with opt.Checkpoints, also the resume points of
// unfinished train stages; with opt.Keep, only the outputs it keeps. A remote entry that
// is partial is replaced when the local result has outputs it lacks.
func Push(ctx context.Context, graphs []*Graph, store *artifacts.Store, r *remote.Remote, opt SyncOptions) (SyncReport, error) {
	var rep SyncReport
	checkpoints := opt.Checkpoints
	for _, n := range uniqueNodes(graphs) {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		key := artifacts.Digest(n.Key)
		a, ok, err := store.GetAction(key)
		if err != nil {
			return rep, err
		}
		if !ok {
			if _, recorded, err := store.ActionMeta(key); err != nil {
				return rep, err
			} else if recorded { // an entry whose outputs are missing or corrupt
				rep.Damaged = append(rep.Damaged, fmt.Sprintf("%s (result %s): its entry is in the local store, but an output is missing or corrupt there (`fedpipe fsck` says which; rerunning the stage recomputes it)", n.Name, key.Short()))
				continue
			}
			rep.Missing++
			if checkpoints {
				if err := pushLocalCheckpoint(ctx, n, store, r, &rep); err != nil {
					return rep, err
				}
			}
			continue
		}
		if opt.Keep != nil {
			a = remote.Keep(a, opt.Keep)
		}
		has, omitted, err := r.StatAction(ctx, key)
		if err != nil {
			return rep, err
		}
		if has && len(remote.Omitted(a)) >= len(omitted) {
			rep.Present++
			if len(omitted) > 0 {
				rep.Partial++
			}
			continue
		}
		t, err := r.PushAction(ctx, store, key, a)
		if err != nil {
			return rep, err
		}
		rep.Results++
		if remote.Partial(a) {
			rep.Partial++
		}
		rep.Blobs += t.Objects
		rep.Bytes += t.Bytes
	}
	return rep, nil
}

func pushLocalCheckpoint(ctx context.Context, n *Node, store *artifacts.Store, r *remote.Remote, rep *SyncReport) error {
	d, found, err := store.GetRef(checkpointRef(n))
	if err != nil || !found {
		return err
	}
	b, err := store.Get(d)
	if err != nil {
		return nil // a corrupt checkpoint is no resume point
	}
	var idx checkpointIndex
	if json.Unmarshal(b, &idx) != nil {
		return nil
	}
	blobs := make([]artifacts.Digest, 0, len(idx.Outputs))
	for _, name := range sortedKeys(idx.Outputs) {
		blobs = append(blobs, idx.Outputs[name])
	}
	t, err := r.PushCheckpoint(ctx, store, artifacts.Digest(n.Key), remote.Checkpoint{Round: idx.Round, Index: d, Blobs: blobs})
	if err != nil {
		return err
	}
	rep.Checkpoints++
	rep.Blobs += t.Objects
	rep.Bytes += t.Bytes
	return nil
}

// Pull downloads every stage result of the graphs that the remote holds intact and the
// local store lacks; with checkpoints, also the remote resume points of unfinished stages
// that are later than the local ones. A partial remote result is stored as partial (its
// action says which outputs it lacks, and a run that needs them recomputes the stage); a
// partial local result is replaced when the remote's has more.
func Pull(ctx context.Context, graphs []*Graph, store *artifacts.Store, r *remote.Remote, checkpoints bool) (SyncReport, error) {
	var rep SyncReport
	for _, n := range uniqueNodes(graphs) {
		key := artifacts.Digest(n.Key)
		local, ok, err := store.GetAction(key)
		if err != nil {
			return rep, err
		}
		if ok && remote.Partial(local) {
			if has, omitted, err := r.StatAction(ctx, key); err != nil {
				return rep, err
			} else if !has || len(omitted) >= len(remote.Omitted(local)) {
				ok = true // the remote has no more than the local store
			} else {
				ok = false
			}
		}
		if ok {
			rep.Present++
			if remote.Partial(local) {
				rep.Partial++
			}
			continue
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		a, ok, t, err := r.FetchActionChecked(ctx, store, key, func(a artifacts.Action) error { return CheckIdentity(store, n, a) })
		if err != nil && !errors.Is(err, artifacts.ErrNotFound) {
			return rep, err
		}
		rep.Blobs += t.Objects
		rep.Bytes += t.Bytes
		if errors.Is(err, remote.ErrCorrupt) {
			rep.Damaged = append(rep.Damaged, fmt.Sprintf("%s: %v", n.Name, err))
			continue
		}
		if ok {
			rep.Results++
			if remote.Partial(a) {
				rep.Partial++
			}
			continue
		}
		rep.Missing++
		if !checkpoints {
			continue
		}
		sc := &StageContext{Node: n, store: store, ctx: ctx}
		round, _, _ := sc.loadLocalCheckpoint()
		cp, got, t, err := r.FetchCheckpoint(ctx, store, key, round)
		if err != nil {
			return rep, err
		}
		rep.Blobs += t.Objects
		rep.Bytes += t.Bytes
		if got {
			if err := store.PutRef(checkpointRef(n), cp.Index); err != nil {
				return rep, err
			}
			rep.Checkpoints++
		}
	}
	return rep, nil
}

// uniqueNodes lists the graphs' nodes, each key once.
func uniqueNodes(graphs []*Graph) []*Node {
	seen := map[Key]bool{}
	var out []*Node
	for _, g := range graphs {
		for _, n := range g.Nodes {
			if !seen[n.Key] {
				seen[n.Key] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// byteCount formats a size for messages.
func byteCount(b int64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
