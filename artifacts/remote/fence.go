package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts"
)

// Fencing. A worker paused past its lease (SIGSTOP, a VM frozen, a swap storm) resumes
// believing it holds the stage while another worker took it over and perhaps finished.
// Every write of a leased stage therefore carries the writer's lease (its generation and
// holder) and goes through its Lease: the Lease first checks that it still holds the stage
// (Check: no later generation, its own lease object present and its own), and the write
// itself is refused when the object already carries a later lease (writeFenced). A
// refused writer drops its result: the stage's result is the later holder's.
//
// The stamp is an optional field of the entry ("lease":{"gen":…,"holder":…}), ignored by
// readers: no key and no existing entry changes.

// ErrLeaseLost matches (errors.Is) the error of a write refused because the writer no
// longer holds the stage's lease.
var ErrLeaseLost = errors.New("lease lost")

// LostError is the error of a write refused for a lost lease; it matches ErrLeaseLost.
type LostError struct {
	// Key is the stage's key; To names the worker that holds (or held) the stage since.
	Key artifacts.Digest
	To  string
}

func (e *LostError) Error() string {
	return fmt.Sprintf("lost the lease of %s to %s; not writing", e.Key.Short(), e.To)
}

// Is makes a LostError match ErrLeaseLost.
func (e *LostError) Is(target error) bool { return target == ErrLeaseLost }

// leaseStamp is the lease under which a worker wrote an entry or a checkpoint pointer.
type leaseStamp struct {
	Gen    int    `json:"gen"`
	Holder string `json:"holder"`
}

// newer reports whether an object stamped s must not be overwritten by a writer holding
// mine: s is a later generation, or the same generation claimed by another holder (a
// claim made again after the lease objects were removed).
func (s *leaseStamp) newer(mine leaseStamp) bool {
	return s != nil && (s.Gen > mine.Gen || (s.Gen == mine.Gen && s.Holder != mine.Holder))
}

// Generation is the lease's generation: 0 for the first claim of a stage, one more for
// each takeover.
func (l *Lease) Generation() int { return l.gen }

func (l *Lease) stamp() leaseStamp { return leaseStamp{Gen: l.gen, Holder: l.r.holder} }

// lostTo returns who took the stage from this lease ("" while it still holds it), reading
// the remote: a later generation's holder; else, when its own lease object is gone (the
// later holder finished and released every generation up to its own) or names another
// holder, whoever stamped the stage's result, or "another worker".
func (l *Lease) lostTo(ctx context.Context) (string, error) {
	r := l.r
	gens, err := r.generations(ctx, l.key)
	if err != nil {
		return "", err
	}
	top := -1
	for g := range gens {
		top = max(top, g)
	}
	if top > l.gen {
		return r.leaseHolder(ctx, l.key, top), nil
	}
	if _, ok := gens[l.gen]; ok {
		raw, found, err := r.get(ctx, r.object(leaseObject(l.key, l.gen)))
		if err != nil {
			return "", err
		}
		var rec leaseRecord
		if !found || json.Unmarshal(raw, &rec) != nil || rec.Holder == "" || rec.Holder == r.holder {
			return "", nil // ours (an unreadable body is a write of ours under way)
		}
		return rec.Holder, nil
	}
	rec, ok, err := r.readAction(ctx, l.key)
	if err == nil && ok && rec.Lease != nil && rec.Lease.Holder != "" && rec.Lease.Holder != r.holder {
		return rec.Lease.Holder, nil
	}
	return "another worker", nil
}

// Check returns nil when this process still holds the lease, else a *LostError (and Lost
// is closed). An error reaching the remote is returned as is: the caller decides whether
// to wait for it. Call it before writing anything of the stage; Lease.PushAction and
// Lease.PushCheckpoint do.
func (l *Lease) Check(ctx context.Context) error {
	if to := l.lostHolder(); to != "" {
		return &LostError{Key: l.key, To: to}
	}
	to, err := l.lostTo(ctx)
	if err != nil {
		return l.r.scrub(fmt.Errorf("remote %s: check the lease of %s: %w", l.r, l.key.Short(), err))
	}
	if to != "" {
		l.markLost(to, to+" holds it now")
		return &LostError{Key: l.key, To: to}
	}
	return nil
}

// LostTo names the worker that took the stage from this lease: "" while this process holds
// it (as far as it knows), else the holder the heartbeat, Check or a refused write found.
func (l *Lease) LostTo() string { return l.lostHolder() }

// lostHolder is who took the lease, once it is known to be lost ("" before).
func (l *Lease) lostHolder() string {
	select {
	case <-l.lost:
		return l.to
	default:
		return ""
	}
}

// PushAction is Remote.PushAction for the stage this lease holds: it checks the lease
// first, stamps the entry with it, and refuses (a *LostError, matching ErrLeaseLost) to
// replace an entry a later lease wrote.
func (l *Lease) PushAction(ctx context.Context, store *artifacts.Store, a artifacts.Action) (Transfer, error) {
	if err := l.Check(ctx); err != nil {
		return Transfer{}, err
	}
	return l.r.pushAction(ctx, store, l.key, a, l)
}

// PushCheckpoint is Remote.PushCheckpoint for the stage this lease holds: it checks the
// lease first, stamps the pointer with it, and refuses to replace a pointer a later lease
// wrote.
func (l *Lease) PushCheckpoint(ctx context.Context, store *artifacts.Store, cp Checkpoint) (Transfer, error) {
	if err := l.Check(ctx); err != nil {
		return Transfer{}, err
	}
	st := l.stamp()
	cp.Lease = &st
	return l.r.pushCheckpoint(ctx, store, l.key, cp, l)
}

// writeFenced writes data to name unless the object there carries a lease newer than
// this one. A missing object is created conditionally (If-None-Match: *, link(2)), so a
// writer racing with it reads again; an existing one is read and then replaced (an
// unreadable one, which no reader uses, is replaced as it was before fencing): the gap
// between that read and the write is one request, where a takeover needs a whole TTL of
// silence and then a stage run.
func (l *Lease) writeFenced(ctx context.Context, what, name string, data []byte) error {
	r, mine := l.r, l.stamp()
	for range 5 {
		raw, found, err := r.get(ctx, name)
		if errors.Is(err, ErrUnreadableObject) {
			return r.put(ctx, name, data, "application/json")
		}
		if err != nil {
			return err
		}
		if found {
			if s := stampOf(raw); s.newer(mine) {
				l.markLost(s.Holder, s.Holder+" wrote its "+what)
				return &LostError{Key: l.key, To: s.Holder}
			}
			return r.put(ctx, name, data, "application/json")
		}
		created, err := r.objs.Create(ctx, name, data, "application/json")
		if err != nil || created {
			return err
		}
	}
	return fmt.Errorf("%s kept changing while being written", r.where(name))
}

// stampOf reads the "lease" field of an entry or checkpoint pointer (nil: none).
func stampOf(raw []byte) *leaseStamp {
	var rec struct {
		Lease *leaseStamp `json:"lease"`
	}
	if json.Unmarshal(raw, &rec) != nil {
		return nil
	}
	return rec.Lease
}
