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
// Where the objects are kept is the remote's kind, a package that registers itself with
// package backend: dirremote (file:///DIR or a path) and s3remote (s3://BUCKET/PREFIX),
// which kinds.go builds in. Open looks the address's scheme up there; nothing else in this
// package knows one kind from another.
//
// A Remote is safe for concurrent use by multiple goroutines.
package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote/backend"
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
	objs    backend.Objects
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
	r := &Remote{cfg: cfg, logf: opt.Logf, secrets: cfg.loc.Secrets(), ttl: opt.LeaseTTL,
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
	if r.objs, err = cfg.loc.Open(ctx, opt.ReadOnly); err != nil {
		return nil, r.scrub(err)
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
	prefix := r.cfg.loc.Prefix()
	if prefix == "" {
		return p
	}
	return prefix + "/" + p
}

func blobObject(d artifacts.Digest) string { return "cas/" + d.String() }

// get downloads an object that is not a blob (an entry, a pointer, a lease: at most
// maxRecordBytes); found is false when it does not exist.
func (r *Remote) get(ctx context.Context, name string) (data []byte, found bool, err error) {
	return r.objs.Get(ctx, name, maxRecordBytes)
}

// where names an object's place for messages: its file in a directory remote, else its
// s3:// address.
func (r *Remote) where(name string) string { return r.objs.Where(name) }

// put uploads an object, replacing any previous one.
func (r *Remote) put(ctx context.Context, name string, data []byte, contentType string) error {
	return r.objs.Put(ctx, name, data, contentType)
}

// exists reports whether an object exists.
func (r *Remote) exists(ctx context.Context, name string) (bool, error) {
	return r.objs.Exists(ctx, name)
}

// RemoveDeadTemps removes the temporary files that writers on this host left in the
// remote when they were killed mid-write (a push or a worker; a directory remote's, see
// dirremote), and returns how many it removed. A remote whose kind leaves none behind, or
// one opened read-only, removes nothing: 0.
func (r *Remote) RemoveDeadTemps() (int, error) {
	if d, ok := r.objs.(backend.DeadTempRemover); ok {
		return d.RemoveDeadTemps()
	}
	return 0, nil
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
