// Package remote keeps a copy of fedpipe's content store and action cache in an
// S3-compatible object store or in a directory on a shared filesystem (NFS, Lustre), so
// that machines can share results and split a sweep.
//
// Layout under the remote's prefix (s3://bucket/prefix), or under the directory
// (file:///dir), one file per object:
//
//	cas/<digest>         a blob's bytes, or a zstd frame of them (blobcodec.go), named by
//	                     the blob's SHA-256 (as the local store's)
//	ac/<key>             an action entry: JSON {"v":1,"outputs":{name: digest},"meta":{…}};
//	                     "v":2 for a partial entry, whose meta lists the outputs left out
//	                     (partial.go)
//	ckpt/<stage key>     the last resume point pushed for a running stage (Checkpoint)
//	lease/<key>/<gen>    a worker's claim on a stage (see lease.go)
//
// The invariants are the local store's, across the network:
//
//   - Blobs are uploaded before the action entry that names them (PushAction), and before
//     the checkpoint pointer that lists them (PushCheckpoint), so an entry never points at
//     a blob that was never written.
//   - Every downloaded blob is re-hashed before it is stored locally. A missing, truncated
//     or corrupt object is logged and treated as a miss, never returned; the blob is
//     remembered as bad, and the next push of it overwrites the object.
//   - Credentials are read from the environment and AWS files (Resolve) and never appear
//     in an error, a log line or String: every message leaving the package is scrubbed of
//     them.
//
// A Remote is safe for concurrent use by multiple goroutines.
package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
)

// DefaultLeaseTTL is how long a lease lives without a heartbeat when Options.LeaseTTL is
// zero.
const DefaultLeaseTTL = 60 * time.Second

// Options configures Open. The zero value is ready to use.
type Options struct {
	// Logf, if non-nil, receives notices: remote objects found missing or corrupt (and
	// treated as misses), leases taken over or lost. Lines never hold credentials.
	Logf func(format string, args ...any)
	// LeaseTTL is how long a worker's lease outlives its last heartbeat (heartbeats come
	// every LeaseTTL/3). Zero means DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Holder names this process in leases and checkpoints; default "HOST/PID".
	Holder string
	// Env reads the environment (os.Getenv when nil); see Resolve.
	Env func(string) string
	// ReadOnly opens a directory remote for reading only: it need not be writable, and
	// nothing is ever written to it (a push, a lease or a delete fails). An S3 remote is
	// opened as usual.
	ReadOnly bool
}

// A Remote is an open connection to a remote store. It holds no resources beyond idle
// HTTP connections (S3); there is nothing to close.
type Remote struct {
	cfg     Config
	objs    objects
	logf    func(string, ...any)
	secrets []string
	ttl     time.Duration
	holder  string

	mu      sync.Mutex
	present map[artifacts.Digest]bool     // blobs known to be stored intact in the remote
	bad     map[artifacts.Digest]bool     // blobs found corrupt there: the next push rewrites them
	seen    map[artifacts.Digest]sighting // leases of other workers, as last observed
}

// Transfer counts what moved between the local store and the remote.
type Transfer struct {
	// Objects is the number of blobs copied; Bytes their total size.
	Objects int
	Bytes   int64
}

// Add adds o to t.
func (t *Transfer) Add(o Transfer) { t.Objects += o.Objects; t.Bytes += o.Bytes }

// Open resolves address (s3://bucket/prefix, file:///dir or a directory path; see
// Resolve) and checks that the bucket can be reached, or that the directory is one (it is
// created when only its last element is missing). Errors wrapping ErrInvalid are the
// user's to fix (a bad address or setting); others say what the server or filesystem
// answered.
func Open(ctx context.Context, address string, opt Options) (*Remote, error) {
	cfg, err := Resolve(address, opt.Env)
	if err != nil {
		return nil, err
	}
	r := &Remote{cfg: cfg, logf: opt.Logf, secrets: cfg.secrets(), ttl: opt.LeaseTTL,
		holder: opt.Holder, present: map[artifacts.Digest]bool{}, bad: map[artifacts.Digest]bool{},
		seen: map[artifacts.Digest]sighting{}}
	if r.logf == nil {
		r.logf = func(string, ...any) {}
	}
	if r.ttl <= 0 {
		r.ttl = DefaultLeaseTTL
	}
	if r.holder == "" {
		host, _ := os.Hostname()
		r.holder = fmt.Sprintf("%s/%d", host, os.Getpid())
	}
	if cfg.Dir != "" {
		r.objs, err = openDir(cfg, opt.ReadOnly)
	} else {
		err = r.openS3(ctx)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// String is the remote's address, s3://bucket/prefix or file:///dir (never credentials).
func (r *Remote) String() string { return r.cfg.String() }

// Holder is the name this process gives itself in leases and checkpoints.
func (r *Remote) Holder() string { return r.holder }

// scrub replaces every credential string in err's message; the result still unwraps to
// err for errors.Is (context cancellation).
func (r *Remote) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := r.scrubString(msg)
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

func (r *Remote) scrubString(s string) string {
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, "[REDACTED]")
	}
	return s
}

func (r *Remote) log(format string, args ...any) {
	r.logf("%s", r.scrubString(fmt.Sprintf(format, args...)))
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }

// Is lets errors.Is see context cancellation, a missing or a corrupt object through a
// scrubbed error without exposing the original message through Unwrap.
func (e *scrubbed) Is(target error) bool {
	return (target == context.Canceled || target == context.DeadlineExceeded || target == artifacts.ErrNotFound || target == ErrCorrupt) &&
		errors.Is(e.err, target)
}

// object returns the object name of a path under the prefix.
func (r *Remote) object(parts ...string) string {
	p := strings.Join(parts, "/")
	if r.cfg.Prefix == "" {
		return p
	}
	return r.cfg.Prefix + "/" + p
}

func blobObject(d artifacts.Digest) string { return "cas/" + d.String() }

// get downloads an object that is not a blob (an entry, a pointer, a lease: at most
// maxRecordBytes); found is false when it does not exist.
func (r *Remote) get(ctx context.Context, name string) (data []byte, found bool, err error) {
	return r.objs.get(ctx, name, maxRecordBytes)
}

// where names an object's place for messages: its file in a directory remote, else its
// s3:// address.
func (r *Remote) where(name string) string {
	if d, ok := r.objs.(*dirObjects); ok {
		return d.path(name)
	}
	return "s3://" + r.cfg.Bucket + "/" + name
}

// put uploads an object, replacing any previous one.
func (r *Remote) put(ctx context.Context, name string, data []byte, contentType string) error {
	return r.objs.put(ctx, name, data, contentType)
}

// exists reports whether an object exists.
func (r *Remote) exists(ctx context.Context, name string) (bool, error) {
	return r.objs.exists(ctx, name)
}

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
	data, found, err := r.objs.get(ctx, name, limit)
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

// Ping returns nil when the remote answers a request (whether a probe object exists),
// else the error, naming the remote: it tells a remote that cannot be reached from one
// that answered with an error of its own.
func (r *Remote) Ping(ctx context.Context) error {
	if _, err := r.exists(ctx, r.object("ping")); err != nil {
		return r.scrub(fmt.Errorf("remote %s: %w", r, err))
	}
	return nil
}
