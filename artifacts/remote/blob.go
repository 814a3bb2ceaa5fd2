package remote

import (
	"context"
	"errors"
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts"
)

// HasBlob reports whether the remote has an object for blob d (its bytes are not read or
// verified; GetBlob does that).
func (r *Remote) HasBlob(ctx context.Context, d artifacts.Digest) (bool, error) {
	r.mu.Lock()
	known, bad := r.present[d], r.bad[d]
	r.mu.Unlock()
	if known {
		return true, nil
	}
	if bad {
		return false, nil
	}
	ok, err := r.exists(ctx, r.object(blobObject(d)))
	if err != nil {
		return false, r.scrub(fmt.Errorf("remote %s: blob %s: %w", r, d.Short(), err))
	}
	return ok, nil
}

// PutBlob uploads data as blob Sum(data) unless the remote already has it (and it was not
// found corrupt). uploaded says whether bytes were sent.
func (r *Remote) PutBlob(ctx context.Context, data []byte) (d artifacts.Digest, uploaded bool, err error) {
	d = artifacts.Sum(data)
	has, err := r.HasBlob(ctx, d)
	if err != nil || has {
		return d, false, err
	}
	if err := r.put(ctx, r.object(blobObject(d)), encodeBlob(data), ""); err != nil {
		return d, false, r.scrub(fmt.Errorf("remote %s: upload blob %s: %w", r, d.Short(), err))
	}
	r.mu.Lock()
	r.present[d] = true
	delete(r.bad, d)
	r.mu.Unlock()
	return d, true, nil
}

// GetBlob downloads blob d and checks its SHA-256. A missing object, or one whose bytes
// do not hash to d (logged, and remembered so that the next PutBlob of d rewrites it),
// returns an error wrapping artifacts.ErrNotFound. The object is read only if it is a
// regular file (in a directory remote) of at most maxBlobDecoded bytes; use getBlob where
// an entry records the blob's size.
func (r *Remote) GetBlob(ctx context.Context, d artifacts.Digest) ([]byte, error) {
	return r.getBlob(ctx, d, -1)
}

// getBlob is GetBlob for a blob whose entry records its size (size < 0: unknown). The
// object — the blob's bytes or a smaller frame of them — may not hold more than size
// bytes: a larger one is refused as corrupt before anything is read; a frame is decoded
// only up to size bytes, hashed as it streams (decodeObject), so one that decodes to more
// is refused as corrupt at once.
func (r *Remote) getBlob(ctx context.Context, d artifacts.Digest, size int64) ([]byte, error) {
	limit := int64(maxBlobDecoded)
	if size >= 0 && size < limit {
		limit = size
	}
	name := r.object(blobObject(d))
	data, found, err := r.objs.Get(ctx, name, limit)
	if errors.Is(err, ErrUnreadableObject) {
		return nil, r.markBad(d, err.Error())
	}
	if err != nil {
		return nil, r.scrub(fmt.Errorf("remote %s: download blob %s (%s): %w", r, d.Short(), r.where(name), err))
	}
	if !found {
		return nil, fmt.Errorf("%w: blob %s is not in the remote %s (no %s)", artifacts.ErrNotFound, d, r, r.where(name))
	}
	if data, err = decodeObject(data, d, size); err != nil {
		return nil, r.markBad(d, fmt.Sprintf("%s: %v", r.where(name), err))
	}
	r.mu.Lock()
	r.present[d] = true
	r.mu.Unlock()
	return data, nil
}

// markBad remembers blob d as corrupt in the remote (the next PutBlob of it rewrites the
// object), logs why, and returns the error wrapping artifacts.ErrNotFound that says so.
func (r *Remote) markBad(d artifacts.Digest, why string) error {
	r.mu.Lock()
	r.bad[d] = true
	delete(r.present, d)
	r.mu.Unlock()
	r.log("remote %s: blob %s is corrupt (%s); treating it as missing", r, d, why)
	return r.scrub(&corruptError{fmt.Sprintf("%v: blob %s in the remote %s is corrupt (%s)", artifacts.ErrNotFound, d, r, why)})
}

// ErrCorrupt matches (errors.Is) the error of a result the remote holds but cannot serve
// intact: an unreadable entry, an output object missing, damaged, oversize or decoding to
// more than its entry records. Such errors also match artifacts.ErrNotFound (a run treats
// them as a miss and recomputes); a pull reports them as damage (exit 4), apart from
// results the remote never held.
var ErrCorrupt = errors.New("damaged in the remote")

// corruptError is an error matching both artifacts.ErrNotFound and ErrCorrupt.
type corruptError struct{ msg string }

func (e *corruptError) Error() string { return e.msg }

// Is matches artifacts.ErrNotFound and ErrCorrupt.
func (e *corruptError) Is(target error) bool {
	return target == artifacts.ErrNotFound || target == ErrCorrupt
}

// pushBlobs uploads each blob of ds that the remote lacks, reading it from store.
func (r *Remote) pushBlobs(ctx context.Context, store *artifacts.Store, ds []artifacts.Digest) (Transfer, error) {
	var t Transfer
	for _, d := range ds {
		has, err := r.HasBlob(ctx, d)
		if err != nil {
			return t, err
		}
		if has {
			continue
		}
		data, err := store.Get(d)
		if err != nil {
			return t, fmt.Errorf("remote %s: push blob %s: %w", r, d.Short(), err)
		}
		if _, up, err := r.PutBlob(ctx, data); err != nil {
			return t, err
		} else if up {
			t.Objects++
			t.Bytes += int64(len(data))
		}
	}
	return t, nil
}

// blobSizes returns the size of each blob of ds as store records it, for the entry that
// lists them (a reader bounds what it downloads by it).
func blobSizes(store *artifacts.Store, ds []artifacts.Digest) (map[artifacts.Digest]int64, error) {
	sizes := make(map[artifacts.Digest]int64, len(ds))
	for _, d := range ds {
		n, err := store.Size(d)
		if err != nil {
			return nil, err
		}
		sizes[d] = n
	}
	return sizes, nil
}

// fetchBlobs copies each blob of ds that store lacks (or holds corrupt) from the remote,
// verified, each read only up to the size sizes records for it (any size for a blob
// sizes lacks: entries written before sizes were recorded). An error wrapping
// artifacts.ErrNotFound means one is missing or corrupt there.
func (r *Remote) fetchBlobs(ctx context.Context, store *artifacts.Store, ds []artifacts.Digest, sizes map[artifacts.Digest]int64) (Transfer, error) {
	var t Transfer
	for _, d := range ds {
		if store.Verify(d) == nil {
			continue
		}
		size, ok := sizes[d]
		if !ok {
			size = -1
		}
		data, err := r.getBlob(ctx, d, size)
		if err != nil {
			return t, err
		}
		if _, err := store.Put(data); err != nil {
			return t, err
		}
		t.Objects++
		t.Bytes += int64(len(data))
	}
	return t, nil
}
