package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/fedpipe/fedpipe/artifacts"
)

// actionRecord is an action entry as stored in the remote.
type actionRecord struct {
	V       int                         `json:"v"`
	Outputs map[string]artifacts.Digest `json:"outputs"`
	Meta    map[string]string           `json:"meta,omitempty"`
	// Sizes is each output's size in bytes (absent in entries written before it was
	// recorded): a reader refuses an output object larger than that without reading it.
	Sizes map[string]int64 `json:"sizes,omitempty"`
	// Binding ties the entry to its key: artifacts.Binding(key, Outputs) (absent in entries
	// written before it was recorded). An entry whose binding is not that of the key it is
	// stored under — copied from another stage's entry, or its outputs pointed at another
	// stage's blobs — is refused (readAction), naming the stage it names.
	Binding string `json:"binding,omitempty"`
	// SizedBinding ties the entry's outputs and their sizes to its key (sizedBinding;
	// absent in entries written before it was recorded, which an older fedpipe writes and
	// ignores): an entry whose sizes were deleted or edited after it was written is refused
	// (readAction), as one whose binding is another key's.
	SizedBinding string `json:"sized_binding,omitempty"`
	// Lease is the lease under which a worker wrote the entry (fence.go); absent for a
	// stage written without one.
	Lease *leaseStamp `json:"lease,omitempty"`
	// unreadable says why an entry found could not be read (readAction); never stored.
	unreadable string
}

// outputSizes maps each output digest of rec to its recorded size.
func (rec actionRecord) outputSizes() map[artifacts.Digest]int64 {
	sizes := map[artifacts.Digest]int64{}
	for name, n := range rec.Sizes {
		if d, ok := rec.Outputs[name]; ok {
			sizes[d] = n
		}
	}
	return sizes
}

const recordVersion = 1

func actionObject(key artifacts.Digest) string { return "ac/" + key.String() }

func outputDigests(outputs map[string]artifacts.Digest) []artifacts.Digest {
	names := make([]string, 0, len(outputs))
	for n := range outputs {
		names = append(names, n)
	}
	sort.Strings(names)
	ds := make([]artifacts.Digest, len(names))
	for i, n := range names {
		ds[i] = outputs[n]
	}
	return ds
}

// PushAction uploads the action a recorded under key in store: first every output blob
// the remote lacks, then the entry, so the entry never names a blob the remote does not
// have. The Transfer counts the blobs sent.
func (r *Remote) PushAction(ctx context.Context, store *artifacts.Store, key artifacts.Digest, a artifacts.Action) (Transfer, error) {
	return r.pushAction(ctx, store, key, a, nil)
}

// pushAction is PushAction, the entry stamped with and written under lease l (nil: none).
func (r *Remote) pushAction(ctx context.Context, store *artifacts.Store, key artifacts.Digest, a artifacts.Action, l *Lease) (Transfer, error) {
	t, err := r.pushBlobs(ctx, store, outputDigests(a.Outputs))
	if err != nil {
		return t, err
	}
	v := recordVersion
	if Partial(a) {
		v = partialRecordVersion
	}
	sizes := map[string]int64{}
	for name, d := range a.Outputs {
		if sizes[name], err = store.Size(d); err != nil {
			return t, fmt.Errorf("remote %s: record result %s: %w", r, key.Short(), err)
		}
	}
	ar := actionRecord{V: v, Outputs: a.Outputs, Meta: a.Meta, Sizes: sizes, Binding: artifacts.Binding(key, a.Outputs),
		SizedBinding: sizedBinding(key, a.Outputs, sizes)}
	if l != nil {
		st := l.stamp()
		ar.Lease = &st
	}
	rec, err := json.Marshal(ar)
	if err != nil {
		return t, err
	}
	if l != nil {
		err = l.writeFenced(ctx, "result", r.object(actionObject(key)), rec)
	} else {
		err = r.put(ctx, r.object(actionObject(key)), rec, "application/json")
	}
	if errors.Is(err, ErrLeaseLost) {
		return t, err
	}
	if err != nil {
		return t, r.scrub(fmt.Errorf("remote %s: record result %s: %w", r, key.Short(), err))
	}
	return t, nil
}

// readAction returns the remote's entry for key; ok is false if it is absent. An
// unreadable entry (logged) comes back with nil Outputs.
func (r *Remote) readAction(ctx context.Context, key artifacts.Digest) (actionRecord, bool, error) {
	where := r.where(r.object(actionObject(key)))
	raw, found, err := r.get(ctx, r.object(actionObject(key)))
	if errors.Is(err, ErrUnreadableObject) {
		r.log("remote %s: result %s: %v; treating it as a miss", r, key, err)
		return actionRecord{unreadable: err.Error()}, true, nil
	}
	if err != nil {
		return actionRecord{}, false, r.scrub(fmt.Errorf("remote %s: read result %s: %w", r, key.Short(), err))
	}
	if !found {
		return actionRecord{}, false, nil
	}
	var rec actionRecord
	if json.Unmarshal(raw, &rec) != nil || (rec.V != recordVersion && rec.V != partialRecordVersion) || rec.Outputs == nil ||
		(rec.V == partialRecordVersion) != Partial(artifacts.Action{Meta: rec.Meta}) || negativeSize(rec.Sizes) {
		r.log("remote %s: result %s has an unreadable entry (%s); treating it as a miss", r, key, where)
		return actionRecord{unreadable: where + ": not a valid entry"}, true, nil
	}
	if rec.Binding != "" && rec.Binding != artifacts.Binding(key, rec.Outputs) {
		r.log("remote %s: result %s: %s is not bound to its key; treating it as a miss", r, key, where)
		return actionRecord{}, false, fmt.Errorf("%w: %s is not the entry of result %s: %s", ErrUnbound, where, key.Short(), unboundWhy(rec))
	}
	if rec.SizedBinding != "" && rec.SizedBinding != sizedBinding(key, rec.Outputs, rec.Sizes) {
		r.log("remote %s: result %s: %s records other sizes than it was written with; treating it as a miss", r, key, where)
		return actionRecord{}, false, fmt.Errorf("%w: %s records other sizes for its outputs than it was written with (%s: a size deleted or edited)",
			ErrUnbound, where, FormatSizes(rec.Sizes))
	}
	return rec, true, nil
}

// ErrUnbound matches (errors.Is) the error of an entry stored under a key it is not bound to
// (actionRecord.Binding): a swapped or edited entry, never a result to use.
var ErrUnbound = errors.New("result entry bound to another key")

// unboundWhy says what an unbound entry holds: the stage its meta names, or that its outputs
// were edited.
func unboundWhy(rec actionRecord) string {
	if name := rec.Meta["name"]; name != "" {
		return fmt.Sprintf("it names stage %q, and its binding is not this key's (an entry copied from another result, or its outputs changed)", name)
	}
	return "its binding is not this key's (an entry copied from another result, or its outputs changed)"
}

// negativeSize reports whether an entry records a size below zero (it is then unreadable).
func negativeSize(sizes map[string]int64) bool {
	for _, n := range sizes {
		if n < 0 {
			return true
		}
	}
	return false
}

// FetchAction copies the remote's action entry for key, with every output blob, into
// store (blobs first, verified, then the entry) and returns it. ok is false with a nil
// error when the remote has no entry for key. An entry the remote cannot serve — an
// unreadable record, an output missing or corrupt (logged) — is a miss too: ok is false
// and err wraps artifacts.ErrNotFound, saying why. Other errors are failures to reach the
// remote or the local store.
func (r *Remote) FetchAction(ctx context.Context, store *artifacts.Store, key artifacts.Digest) (a artifacts.Action, ok bool, t Transfer, err error) {
	return r.FetchActionChecked(ctx, store, key, nil)
}

// FetchActionChecked is FetchAction with a check of the result before its entry is
// written into store: check (nil: none) is called once every output blob is stored and
// verified, and an error from it ends the fetch with that error and no entry written, so
// a result that is not the one asked for (pipeline's identity check) never becomes a hit.
func (r *Remote) FetchActionChecked(ctx context.Context, store *artifacts.Store, key artifacts.Digest,
	check func(artifacts.Action) error) (a artifacts.Action, ok bool, t Transfer, err error) {
	rec, ok, err := r.readAction(ctx, key)
	if err != nil || !ok {
		return artifacts.Action{}, false, t, err
	}
	if rec.Outputs == nil {
		return artifacts.Action{}, false, t, &corruptError{fmt.Sprintf("%v: the remote's entry for %s is unreadable (%s)", artifacts.ErrNotFound, key.Short(), rec.unreadable)}
	}
	t, err = r.fetchBlobs(ctx, store, outputDigests(rec.Outputs), rec.outputSizes())
	if errors.Is(err, artifacts.ErrNotFound) {
		r.log("remote %s: result %s (%s): %v; treating it as a miss", r, key.Short(), rec.Meta["name"], err)
		return artifacts.Action{}, false, t, err
	}
	if err != nil {
		return artifacts.Action{}, false, t, err
	}
	a = artifacts.Action{Outputs: rec.Outputs, Meta: rec.Meta}
	if check != nil {
		if err := check(a); err != nil {
			return artifacts.Action{}, false, t, err
		}
	}
	if err := store.PutAction(key, a); err != nil {
		return artifacts.Action{}, false, t, err
	}
	return a, true, t, nil
}

// HasAction reports whether the remote has an entry for key and an object for each of
// its outputs; the entry may be partial (see Partial). It reads no blob: a corrupt one is
// found only by FetchAction.
func (r *Remote) HasAction(ctx context.Context, key artifacts.Digest) (bool, error) {
	ok, _, err := r.StatAction(ctx, key)
	return ok, err
}

// StatAction is HasAction, also returning the names of the outputs the remote's entry
// omits (none for a complete entry).
func (r *Remote) StatAction(ctx context.Context, key artifacts.Digest) (ok bool, omitted []string, err error) {
	rec, ok, err := r.readAction(ctx, key)
	if err != nil || !ok || rec.Outputs == nil {
		return false, nil, err
	}
	for _, d := range outputDigests(rec.Outputs) {
		if has, err := r.HasBlob(ctx, d); err != nil || !has {
			return false, nil, err
		}
	}
	return true, Omitted(artifacts.Action{Meta: rec.Meta}), nil
}
