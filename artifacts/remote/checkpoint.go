package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts"
)

// A Checkpoint is a running stage's resume point as pushed to the remote.
type Checkpoint struct {
	// Round is the last round the checkpoint includes.
	Round int `json:"round"`
	// Index is the blob the stage reads back (its own format); Blobs are the blobs Index
	// refers to, uploaded before the pointer.
	Index artifacts.Digest   `json:"index"`
	Blobs []artifacts.Digest `json:"blobs"`
	// Holder is the worker that pushed it.
	Holder string `json:"holder,omitempty"`
	// Sizes records the size of Index and of each of Blobs (absent in pointers pushed
	// before sizes were recorded); a reader refuses a larger object without reading it.
	Sizes map[artifacts.Digest]int64 `json:"sizes,omitempty"`
	// Lease is the lease under which a worker pushed it (set by Lease.PushCheckpoint).
	Lease *leaseStamp `json:"lease,omitempty"`
}

func checkpointObject(stage artifacts.Digest) string { return "ckpt/" + stage.String() }

// PushCheckpoint uploads cp's blobs the remote lacks, its index, then the stage's
// checkpoint pointer (replacing the previous one).
func (r *Remote) PushCheckpoint(ctx context.Context, store *artifacts.Store, stage artifacts.Digest, cp Checkpoint) (Transfer, error) {
	return r.pushCheckpoint(ctx, store, stage, cp, nil)
}

// pushCheckpoint is PushCheckpoint written under lease l (nil: none).
func (r *Remote) pushCheckpoint(ctx context.Context, store *artifacts.Store, stage artifacts.Digest, cp Checkpoint, l *Lease) (Transfer, error) {
	if cp.Holder == "" {
		cp.Holder = r.holder
	}
	all := append(append([]artifacts.Digest(nil), cp.Blobs...), cp.Index)
	t, err := r.pushBlobs(ctx, store, all)
	if err != nil {
		return t, err
	}
	if cp.Sizes, err = blobSizes(store, all); err != nil {
		return t, fmt.Errorf("remote %s: push checkpoint of %s: %w", r, stage.Short(), err)
	}
	b, err := json.Marshal(cp)
	if err != nil {
		return t, err
	}
	if l != nil {
		err = l.writeFenced(ctx, "checkpoint", r.object(checkpointObject(stage)), b)
	} else {
		err = r.put(ctx, r.object(checkpointObject(stage)), b, "application/json")
	}
	if errors.Is(err, ErrLeaseLost) {
		return t, err
	}
	if err != nil {
		return t, r.scrub(fmt.Errorf("remote %s: push checkpoint of %s: %w", r, stage.Short(), err))
	}
	return t, nil
}

// FetchCheckpoint copies the stage's remote checkpoint into store when it is later than
// round after, and returns it. ok is false when there is none, it is not later, or any
// of its blobs is missing or corrupt (logged).
func (r *Remote) FetchCheckpoint(ctx context.Context, store *artifacts.Store, stage artifacts.Digest, after int) (cp Checkpoint, ok bool, t Transfer, err error) {
	raw, found, err := r.get(ctx, r.object(checkpointObject(stage)))
	if err != nil {
		return cp, false, t, r.scrub(fmt.Errorf("remote %s: read checkpoint of %s: %w", r, stage.Short(), err))
	}
	if !found {
		return cp, false, t, nil
	}
	if json.Unmarshal(raw, &cp) != nil || cp.Index.IsZero() {
		r.log("remote %s: the checkpoint of %s is unreadable; ignoring it", r, stage.Short())
		return Checkpoint{}, false, t, nil
	}
	if cp.Round <= after {
		return cp, false, t, nil
	}
	t, err = r.fetchBlobs(ctx, store, append(append([]artifacts.Digest(nil), cp.Blobs...), cp.Index), cp.Sizes)
	if errors.Is(err, artifacts.ErrNotFound) {
		r.log("remote %s: the checkpoint of %s after round %d: %v; ignoring it", r, stage.Short(), cp.Round, err)
		return Checkpoint{}, false, t, nil
	}
	if err != nil {
		return Checkpoint{}, false, t, err
	}
	return cp, true, t, nil
}

// DeleteCheckpoint removes the stage's checkpoint pointer (its blobs stay: they are
// content-addressed and may be shared). Deleting an absent pointer is not an error.
func (r *Remote) DeleteCheckpoint(ctx context.Context, stage artifacts.Digest) error {
	if err := r.objs.Remove(ctx, r.object(checkpointObject(stage))); err != nil {
		return r.scrub(fmt.Errorf("remote %s: delete checkpoint of %s: %w", r, stage.Short(), err))
	}
	return nil
}
