package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
)

// Leases let workers that share a remote split its stages without a coordinator.
//
// A claim on stage K is the object lease/K/<gen>, gen a zero-padded generation number,
// created conditionally (S3: a PUT with If-None-Match: *; a directory: link(2), see
// dirremote/objects.go), so of any number of workers creating the same name exactly one succeeds. The holder rewrites its object every TTL/3 (a
// heartbeat: the body counts beats, so its ETag changes). Another worker deems the lease
// expired when it has watched the same generation and ETag for a whole TTL by its own
// clock (so clocks need not agree), and takes the stage over by creating generation
// gen+1, again conditionally: one taker wins. A holder whose heartbeat finds a later
// generation has lost the stage and is told so through Lost. A holder that cannot reach
// the remote keeps its claim and retries, with a growing wait, until the remote answers:
// the stage goes on meanwhile (its checkpoints are local), and the first heartbeat that
// gets through either renews the lease or finds that a worker who could reach the remote
// took the stage over after a TTL of silence (Lost). Either way no result is wrong: a
// stage is a pure function of its key, so two workers that ran it push the same bytes.
// Release deletes the holder's generations after the stage's result is pushed; the
// others check the result before claiming, so a deleted lease is never mistaken for an
// unfinished stage.

// A Lease is this process's claim on one stage. Create it with TryLease; call Release
// exactly once, when the stage is finished or abandoned.
type Lease struct {
	r        *Remote
	key      artifacts.Digest
	gen      int
	prev     string // the holder of the expired lease taken over ("" for a fresh claim)
	lost     chan struct{}
	to       string // who took the stage over, once lost is closed
	stop     chan struct{}
	done     chan struct{}
	lostOnce sync.Once
}

// leaseRecord is the body of a lease object.
type leaseRecord struct {
	Holder string  `json:"holder"`
	Beat   int     `json:"beat"`
	TTL    float64 `json:"ttl_seconds"`
}

// sighting is another worker's lease as this process last saw it change.
type sighting struct {
	gen  int
	etag string
	at   time.Time
}

func leasePrefix(key artifacts.Digest) string { return "lease/" + key.String() + "/" }

func leaseObject(key artifacts.Digest, gen int) string {
	return leasePrefix(key) + fmt.Sprintf("%010d", gen)
}

// generations lists the stage's lease objects: generation → version tag (ETag).
func (r *Remote) generations(ctx context.Context, key artifacts.Digest) (map[int]string, error) {
	objs, err := r.objs.List(ctx, r.object(leasePrefix(key)))
	if err != nil {
		return nil, err
	}
	gens := map[int]string{}
	for name, tag := range objs {
		if g, err := strconv.Atoi(name); err == nil {
			gens[g] = tag
		}
	}
	return gens, nil
}

// TryLease tries to claim the stage with key. It returns the Lease when this process now
// holds it, heartbeat running; or nil and the current holder's name when another live
// worker holds it. A lease is taken over only after this process has watched it unchanged
// for a whole TTL, so the first calls on a dead worker's lease return its holder.
func (r *Remote) TryLease(ctx context.Context, key artifacts.Digest) (l *Lease, holder string, err error) {
	gens, err := r.generations(ctx, key)
	if err != nil {
		return nil, "", r.scrub(fmt.Errorf("remote %s: list leases of %s: %w", r, key.Short(), err))
	}
	next, prev := 0, ""
	if len(gens) > 0 {
		top := -1
		for g := range gens {
			top = max(top, g)
		}
		holder = r.leaseHolder(ctx, key, top)
		now := time.Now()
		r.mu.Lock()
		s, ok := r.seen[key]
		if !ok || s.gen != top || s.etag != gens[top] {
			r.seen[key] = sighting{gen: top, etag: gens[top], at: now}
			r.mu.Unlock()
			return nil, holder, nil
		}
		r.mu.Unlock()
		if now.Sub(s.at) < r.ttl {
			return nil, holder, nil
		}
		next, prev = top+1, holder
	}
	rec, _ := json.Marshal(leaseRecord{Holder: r.holder, TTL: r.ttl.Seconds()})
	created, err := r.objs.Create(ctx, r.object(leaseObject(key, next)), rec, "application/json")
	if err != nil {
		return nil, "", r.scrub(fmt.Errorf("remote %s: claim %s: %w", r, key.Short(), err))
	}
	if !created {
		return nil, r.leaseHolder(ctx, key, next), nil
	}
	r.mu.Lock()
	delete(r.seen, key)
	r.mu.Unlock()
	if prev != "" {
		r.log("remote %s: the lease of %s held by %s expired (no heartbeat for %v); taking it over", r, key.Short(), prev, r.ttl)
	}
	l = &Lease{r: r, key: key, gen: next, prev: prev, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go l.heartbeat()
	return l, "", nil
}

// leaseHolder reads the holder named in a lease object ("another worker" if unreadable).
func (r *Remote) leaseHolder(ctx context.Context, key artifacts.Digest, gen int) string {
	raw, found, err := r.get(ctx, r.object(leaseObject(key, gen)))
	var rec leaseRecord
	if err != nil || !found || json.Unmarshal(raw, &rec) != nil || rec.Holder == "" {
		return "another worker"
	}
	return rec.Holder
}

// TookOver returns the holder of the expired lease this one replaced, or "" for a claim
// on a stage nobody held.
func (l *Lease) TookOver() string { return l.prev }

// Lost is closed when this process no longer holds the lease: another worker took it
// over (this one was deemed dead, or could not reach the remote for a TTL while the
// other could). The stage should stop. A remote that cannot be reached does not close
// it by itself: the heartbeat retries (see heartbeat).
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// markLost records that to took the stage over (why says how this process learnt it) and
// closes Lost.
func (l *Lease) markLost(to, why string) {
	l.lostOnce.Do(func() {
		l.r.log("remote %s: lost the lease of %s to %s (%s); not writing", l.r, l.key.Short(), to, why)
		l.to = to
		close(l.lost)
	})
}

// heartbeat rewrites the lease every TTL/3 until Release, and watches for a later
// generation. While the remote cannot be reached it retries after 2, 4 … × TTL/3, at
// most a TTL, each wait drawn from its upper half (so that workers cut off together do
// not all call a recovering server at once), saying so once when the remote goes away,
// once a TTL later (others may take the stage over from then on), and once when it
// answers again.
func (l *Lease) heartbeat() {
	defer close(l.done)
	r := l.r
	period := r.ttl / 3
	step, wait := period, period // the nominal wait, and the wait drawn from it
	lastOK := time.Now()
	down, warned := false, false
	for beat := 1; ; beat++ {
		timer := time.NewTimer(wait)
		select {
		case <-l.stop:
			timer.Stop()
			return
		case <-timer.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), period)
		// A later generation, or this generation's object gone (the later holder finished
		// and released it) or another's: lost. A heartbeat never recreates a lease object.
		to, err := l.lostTo(ctx)
		if err == nil && to != "" {
			cancel()
			why := to + " took it over"
			if down {
				why += fmt.Sprintf(" while this one could not reach the remote (for %v)", time.Since(lastOK).Round(time.Second))
			}
			l.markLost(to, why)
			return
		}
		if err == nil {
			rec, _ := json.Marshal(leaseRecord{Holder: r.holder, Beat: beat, TTL: r.ttl.Seconds()})
			err = r.put(ctx, r.object(leaseObject(l.key, l.gen)), rec, "application/json")
		}
		cancel()
		if err == nil {
			if down {
				r.log("remote %s: reachable again after %v; the lease of %s is renewed", r, time.Since(lastOK).Round(time.Second), l.key.Short())
			}
			lastOK, down, warned, step, wait = time.Now(), false, false, period, period
			continue
		}
		if !down {
			down = true
			r.log("remote %s is unreachable (%v): the stage %s goes on from its local checkpoints, and its lease heartbeat retries with backoff", r, r.scrub(err), l.key.Short())
		}
		if !warned && time.Since(lastOK) >= r.ttl {
			warned = true
			r.log("remote %s: no heartbeat of the lease of %s reached it for %v; a worker that can reach it may take the stage over (this one stops when it sees that)", r, l.key.Short(), r.ttl)
		}
		step = min(2*step, r.ttl)
		wait = Jitter(step)
	}
}

// Release stops the heartbeat and, unless the lease was lost, deletes this claim's lease
// objects (generations up to its own). Call it after the stage's result is pushed, or
// when abandoning the stage.
func (l *Lease) Release(ctx context.Context) error {
	close(l.stop)
	<-l.done
	select {
	case <-l.lost:
		return nil
	default:
	}
	gens, err := l.r.generations(ctx, l.key)
	if err != nil {
		return l.r.scrub(fmt.Errorf("remote %s: release %s: %w", l.r, l.key.Short(), err))
	}
	var mine []int
	for g := range gens {
		if g <= l.gen {
			mine = append(mine, g)
		}
	}
	sort.Ints(mine) // its own generation last
	for _, g := range mine {
		if err := l.r.objs.Remove(ctx, l.r.object(leaseObject(l.key, g))); err != nil {
			return l.r.scrub(fmt.Errorf("remote %s: release %s: %w", l.r, l.key.Short(), err))
		}
	}
	return nil
}

// Jitter returns a wait drawn at random from the upper half of d (between d/2 and d):
// processes that back off together (heartbeats of workers cut off at once, workers
// waiting for the same stages) then do not call the remote in step. It moves only when a
// process looks, never what it computes.
func Jitter(d time.Duration) time.Duration {
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(d-half)+1))
}
