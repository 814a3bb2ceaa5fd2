package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/manifest"
)

// StateSkipped marks a stage a split run left to another process (--shard), or that
// needs one it left.
const StateSkipped = "skipped"

// Split shares a plan between processes that use one remote, without a coordinator.
//
// A worker (Worker) claims each train, evaluate and shift stage with a lease in the remote
// before running it, skips stages other live workers hold and comes back to them, fetches
// what the others finished, and takes over a stage whose holder stopped renewing its
// lease, resuming from the checkpoint the holder last pushed. Partitions and the report
// are cheap and run wherever they are needed (storing identical content). Every worker
// returns when the whole plan is done, each with the full set of results.
//
// A static split (Shards > 0) gives train stage t — counted in plan order — to shard
// t mod Shards, with the evaluate and shift stages of its run; a shard runs its own
// stages, fetches the others' when the remote has them, and skips the rest.
type Split struct {
	Worker        bool
	Shard, Shards int
	// Poll is how soon a worker looks again while others hold what it waits for (default
	// 2 s). Each further look that finds nothing new waits twice as long, up to MaxPoll
	// (default 8×Poll), with jitter; progress, or a change in what it waits for (another
	// stage, another holder), starts again from Poll.
	Poll, MaxPoll time.Duration
	// RetryFor is how long a worker waits for a remote that does not answer (default 10
	// minutes): before reading it again, or before pushing a finished stage's result,
	// which stays in the local store meanwhile.
	RetryFor time.Duration

	// sleep waits between looks (sleepCtx; tests count the waits instead).
	sleep func(ctx context.Context, d time.Duration) error
}

// ParseShard parses "i/n" (0 ≤ i < n).
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %q: want I/N with 0 ≤ I < N, e.g. 0/4", s)
	}
	return i, n, nil
}

// retryFor is RetryFor or its default.
func (sp *Split) retryFor() time.Duration {
	if sp.RetryFor > 0 {
		return sp.RetryFor
	}
	return 10 * time.Minute
}

// sleepFunc is how the split run waits: sleepCtx unless a test counts the waits.
func (sp *Split) sleepFunc() func(context.Context, time.Duration) error {
	if sp.sleep != nil {
		return sp.sleep
	}
	return sleepCtx
}

// leased reports whether workers claim n before running it.
func leased(n *Node) bool { return n.Kind != manifest.KindPartition && n.Kind != manifest.KindReport }

// shardOwners maps each train stage (in plan order) and the evaluate and shift stages
// downstream of it to its shard; other stages are absent (anyone runs them).
func shardOwners(plan []PlanEntry, shards int) map[*Node]int {
	owner := map[*Node]int{}
	t := 0
	for _, p := range plan {
		n := p.Node
		switch {
		case n.Kind == manifest.KindTrain:
			owner[n] = t % shards
			t++
		case leased(n) && n.Input(manifest.KindTrain) != nil:
			if o, ok := owner[n.Input(manifest.KindTrain)]; ok {
				owner[n] = o
			}
		}
	}
	return owner
}

// errLeaseLost ends a stage whose lease another worker took over.
var errLeaseLost = errors.New("lease lost")

// executeSplit runs the plan as one of several processes sharing the remote (see Split).
// Results come back in plan order.
func (e *Executor) executeSplit(ctx context.Context, g *Graph, plan []PlanEntry) ([]StageResult, error) {
	sp := e.Split
	if e.Remote == nil {
		return nil, fmt.Errorf("--worker and --shard need a remote (--remote or $%s)", remote.EnvRemote)
	}
	poll := sp.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	wait := backoff{base: poll, limit: sp.MaxPoll}
	if wait.limit <= 0 {
		wait.limit = 8 * poll
	}
	sleep := sp.sleepFunc()
	var owner map[*Node]int
	if sp.Shards > 0 {
		owner = shardOwners(plan, sp.Shards)
	}
	actions := map[*Node]artifacts.Action{}
	results := make([]*StageResult, len(plan))
	skipped := map[*Node]string{}
	total := 0
	for i, p := range plan {
		if p.State == StateCached {
			actions[p.Node] = p.action
			results[i] = &StageResult{Kind: p.Node.Kind, Name: p.Node.Name, Key: p.Node.Key.String(), State: StateCached,
				Outputs: digestStrings(p.action.Outputs)}
		} else {
			total++
		}
	}
	collect := func() []StageResult {
		out := make([]StageResult, 0, len(plan))
		for i, p := range plan {
			switch {
			case results[i] != nil:
				out = append(out, *results[i])
			case skipped[p.Node] != "":
				out = append(out, StageResult{Kind: p.Node.Kind, Name: p.Node.Name, Key: p.Node.Key.String(),
					State: StateSkipped, Reason: skipped[p.Node]})
			}
		}
		return out
	}
	index := 0
	lastWaiting, lastShown := "", ""
	var downSince time.Time // when the remote stopped answering (zero while it answers)
	for {
		progressed, left := false, 0
		var waiting []string
		var trouble error // a read of the remote that got no answer: wait for it
		for i, p := range plan {
			n := p.Node
			if results[i] != nil || skipped[n] != "" {
				continue
			}
			left++
			ready := true
			for _, in := range n.Inputs {
				if _, ok := actions[in]; !ok {
					ready = false
					if skipped[in] != "" {
						skipped[n] = "needs " + in.Name + ", not run here"
					}
				}
			}
			if !ready {
				continue
			}
			if err := ctx.Err(); err != nil {
				return collect(), err
			}
			reason := p.Reason
			res, ok, err := e.fetch(ctx, n, actions, &reason)
			if err != nil {
				if !e.unreachable(ctx, err) {
					return collect(), err
				}
				trouble = err
				break
			}
			if ok {
				results[i], progressed = &res, true
				continue
			}
			if o, ok := owner[n]; ok && o != sp.Shard {
				skipped[n] = fmt.Sprintf("shard %d/%d runs it", o, sp.Shards)
				continue
			}
			var lease *remote.Lease
			if sp.Worker && leased(n) {
				l, holder, err := e.Remote.TryLease(ctx, artifacts.Digest(n.Key))
				if err != nil {
					if !e.unreachable(ctx, err) {
						return collect(), err
					}
					trouble = err
					break
				}
				if l == nil {
					waiting = append(waiting, n.Name+" ("+holder+")")
					continue
				}
				lease = l
				// The holder may have finished between the fetch above and the claim.
				if res, ok, err := e.fetch(ctx, n, actions, &reason); err != nil || ok {
					lease.Release(context.WithoutCancel(ctx))
					if err != nil {
						if !e.unreachable(ctx, err) {
							return collect(), err
						}
						trouble = err
						break
					}
					results[i], progressed = &res, true
					continue
				}
			}
			index++
			res, err = e.runLeased(ctx, g, n, reason, actions, index, total, lease)
			if errors.Is(err, errLeaseLost) {
				progressed = true
				continue
			}
			if err != nil {
				return collect(), err
			}
			results[i], progressed = &res, true
		}
		if trouble != nil {
			if downSince.IsZero() {
				downSince = time.Now()
				wait.reset()
				e.Progress.Logf("cannot reach the remote (%v); retrying with backoff for up to %v", trouble, sp.retryFor())
			}
			if time.Since(downSince) >= sp.retryFor() {
				return collect(), trouble
			}
			if err := sleep(ctx, wait.next()); err != nil {
				return collect(), err
			}
			continue
		}
		if !downSince.IsZero() {
			e.Progress.Logf("the remote %s answers again (after %v)", e.Remote, time.Since(downSince).Round(time.Second))
			downSince = time.Time{}
			wait.reset()
		}
		if left == 0 {
			break
		}
		if progressed {
			wait.reset()
			continue
		}
		if len(waiting) == 0 {
			break // everything left is another shard's, or needs what is
		}
		if all := strings.Join(waiting, ", "); all != lastWaiting {
			wait.reset()
			lastWaiting = all
		}
		w := strings.Join(waiting[:min(len(waiting), 3)], ", ")
		if len(waiting) > 3 {
			w += fmt.Sprintf(" and %d more", len(waiting)-3)
		}
		if w != lastShown {
			e.Progress.Logf("waiting for other workers: %s", w)
			lastShown = w
		}
		if err := sleep(ctx, wait.next()); err != nil {
			return collect(), err
		}
	}
	return collect(), nil
}

// unreachable reports whether err, from a read of the remote, means that the remote does
// not answer (Remote.Ping fails too): a worker then waits for it, as for a stage another
// worker holds, instead of giving up on the first blip. Other errors end the run.
func (e *Executor) unreachable(ctx context.Context, err error) bool {
	return ctx.Err() == nil && !errors.Is(err, context.Canceled) && e.Remote.Ping(ctx) != nil
}

// runLeased runs a stage under lease (nil: none): the stage is cancelled if the lease is
// lost, and the lease is released once the result is pushed or the stage failed.
func (e *Executor) runLeased(ctx context.Context, g *Graph, n *Node, reason string, actions map[*Node]artifacts.Action, index, total int, lease *remote.Lease) (StageResult, error) {
	if lease == nil {
		return e.runStage(ctx, g, n, reason, actions, index, total)
	}
	sctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-lease.Lost():
			cancel()
		case <-sctx.Done():
		}
	}()
	if prev := lease.TookOver(); prev != "" {
		reason = "took over from " + prev + ", whose lease expired; " + reason
		// The worker whose lease expired may have died mid-write, leaving a temporary
		// file in a directory remote: if it ran on this host, it goes now.
		if k, _ := e.Remote.RemoveDeadTemps(); k > 0 {
			e.Progress.Logf("removed %d temporary files that writers killed mid-write left in %s", k, e.Remote)
		}
	}
	res, err := e.runStage(withFence(withLease(sctx, lease.TookOver()), lease), g, n, reason, actions, index, total)
	lost := false
	select {
	case <-lease.Lost():
		lost = true
	default:
	}
	cancel()
	if rerr := lease.Release(context.WithoutCancel(ctx)); rerr != nil {
		e.Progress.Logf("%v", rerr)
	}
	if err != nil && lost && ctx.Err() == nil {
		// Whether the heartbeat, a check before a write or the remote's refusal of a write
		// told it: nothing of this stage was written after the lease was lost.
		e.Progress.Logf("lost the lease of %s to %s; not writing (its result comes from that worker)", n.Name, lease.LostTo())
		return res, errLeaseLost
	}
	return res, err
}
