// Package backend is what a remote's protocol (package remote) asks of the place it keeps
// its objects, and the registry of the kinds of place there are: each kind (a directory on
// a shared filesystem, an S3 bucket) is a package that registers a Kind with its scheme,
// its address parsing and its way of opening, and remote.Open looks the scheme up here.
//
// A kind imports this package and never package remote, so remote (and its tests) can
// import every kind.
package backend

import (
	"context"
	"errors"
	"net/url"
	"time"
)

// ErrInvalid is wrapped by errors in a remote's address or settings: the user's input, not
// a failure of the server.
var ErrInvalid = errors.New("invalid remote")

// ErrUnreadableObject matches (errors.Is) the error of an object that is there but must not
// be read as one: in a directory, a named pipe, a device, a directory or a socket (directly
// or through a symbolic link); anywhere, an object larger than its entry allows. A reader
// treats it as a damaged object, never waits on it and never allocates its claimed size.
var ErrUnreadableObject = errors.New("not a readable object")

// MaxRecordBytes bounds what is read of an object that is not a blob: an action entry, a
// checkpoint pointer, a lease, a kept-results index entry (each a few KiB of JSON).
const MaxRecordBytes = 16 << 20

// UnreadableError is the refusal of an unreadable object; it matches ErrUnreadableObject.
type UnreadableError struct {
	// Where names the object: its file, or its address.
	Where string
	// Why says what is wrong with it.
	Why string
}

// Error is "WHERE: WHY".
func (e *UnreadableError) Error() string { return e.Where + ": " + e.Why }

// Is matches ErrUnreadableObject.
func (e *UnreadableError) Is(target error) bool { return target == ErrUnreadableObject }

// Objects is what the remote's protocol needs of the place it keeps its objects. Names are
// slash-separated paths such as cas/<digest>; the remote adds its prefix (Location.Prefix)
// before calling.
//
// Every implementation must guarantee what the protocol relies on: Get never returns a
// partly written object (a Put replaces an object whole or not at all); Create succeeds
// for exactly one of any number of concurrent creators of a name; Put, Create and Remove
// of different names do not interfere.
type Objects interface {
	// Get returns an object's bytes; found is false when it does not exist. An object of
	// more than limit bytes is refused (an error wrapping ErrUnreadableObject) without
	// reading it, and so is anything that is not a regular file in a directory.
	Get(ctx context.Context, name string, limit int64) (data []byte, found bool, err error)
	// Put writes an object, replacing any previous one.
	Put(ctx context.Context, name string, data []byte, contentType string) error
	// Create writes an object only if no object of that name exists; created is false
	// (with a nil error) when one does.
	Create(ctx context.Context, name string, data []byte, contentType string) (created bool, err error)
	// Exists reports whether an object exists.
	Exists(ctx context.Context, name string) (bool, error)
	// List returns the objects whose names start with prefix (a folder, ending in "/"),
	// named relative to prefix, each with a tag that changes whenever the object is
	// rewritten (an ETag, or a hash of the bytes).
	List(ctx context.Context, prefix string) (map[string]string, error)
	// Remove deletes an object; removing an absent one is not an error.
	Remove(ctx context.Context, name string) error
	// Scan returns every object whose name starts with prefix (a folder, ending in "/"),
	// named relative to prefix, with its size and last modification time as the server
	// or file server records it; it reads no object's bytes.
	Scan(ctx context.Context, prefix string) ([]ObjectInfo, error)
	// Where names an object's place for messages: its file, or its address.
	Where(name string) string
}

// ObjectInfo is an object as Scan lists it.
type ObjectInfo struct {
	Name     string
	Size     int64
	Modified time.Time
}

// DeadTempRemover is implemented by Objects whose interrupted writes leave files behind
// (a directory's temporary files).
type DeadTempRemover interface {
	// RemoveDeadTemps removes the leftovers of writers on this host that are no longer
	// running, and returns how many it removed.
	RemoveDeadTemps() (int, error)
}

// A Location is a remote's resolved address: where its objects are, and how to reach them.
type Location interface {
	// String is the remote's address, fit for logs and --json: never credentials.
	String() string
	// Prefix is the folder, without surrounding slashes, under which the remote's objects
	// are named ("" for none).
	Prefix() string
	// Secrets returns the credential strings that must never be printed.
	Secrets() []string
	// Open checks that the place can be reached and returns its objects. With readOnly,
	// nothing is ever written through them, where the kind can promise that. Its errors may
	// quote secrets: the caller scrubs them.
	Open(ctx context.Context, readOnly bool) (Objects, error)
}

// Workers says what workers started on other machines (a Kubernetes Job's pods, a SLURM
// job array's tasks) need to reach a remote of a kind.
type Workers struct {
	// SharedPath is true when the remote is a path of this machine's filesystem: every
	// worker must mount it at the same path (pods of a Kubernetes Job share none), and is
	// given its absolute address.
	SharedPath bool
}

// A Kind is one kind of place a remote keeps its objects in, registered under its scheme.
type Kind struct {
	// Scheme names the kind in addresses, SCHEME://…
	Scheme string
	// Want shows the kind's addresses in messages: "s3://BUCKET/PREFIX".
	Want string
	// Paths says that the kind also takes an address with no scheme, and any address that
	// starts with Scheme and a colon (file:relative/dir): a path, which Parse judges. At
	// most one kind takes paths.
	Paths bool
	// Workers is what workers elsewhere need to reach a remote of this kind.
	Workers Workers
	// Parse resolves an address of the kind, reading any settings from env (never nil).
	// Errors in the address or settings wrap ErrInvalid.
	Parse func(address string, env func(string) string) (Location, error)
}

// RedactURL drops user information from an address before it is quoted in a message.
func RedactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = url.User("REDACTED")
		return u.String()
	}
	return s
}
