package remote

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
)

// Progress journals (package live) of the stages workers train are kept under progress/,
// one object <key>.json per stage, replaced whole at every write. They are no part of any
// result: gc leaves them, and a stage's next run replaces its journal.

func progressObject(key artifacts.Digest) string { return "progress/" + key.String() + ".json" }

// PutProgress stores stage key's progress journal, replacing any previous one.
func (r *Remote) PutProgress(ctx context.Context, key artifacts.Digest, data []byte) error {
	return r.scrub(r.put(ctx, r.object(progressObject(key)), data, "application/json"))
}

// Progress returns every progress journal in the remote, by stage key (hex).
func (r *Remote) Progress(ctx context.Context) (map[string][]byte, error) {
	objs, err := r.objs.List(ctx, r.object("progress/"))
	if err != nil {
		return nil, r.scrub(err)
	}
	out := map[string][]byte{}
	for name := range objs {
		key, ok := strings.CutSuffix(name, ".json")
		if !ok || strings.Contains(key, "/") {
			continue
		}
		data, found, err := r.get(ctx, r.object("progress/"+name))
		if err != nil {
			return nil, r.scrub(err)
		}
		if found {
			out[key] = data
		}
	}
	return out, nil
}

// LeaseInfo is a stage's current lease as a reader sees it (LeaseOf).
type LeaseInfo struct {
	// Held: some generation of the lease exists.
	Held bool
	// Holder is the newest generation's holder; Generation its number (0: the first claim).
	Holder     string
	Generation int
	// Age is how long ago the newest generation was last rewritten, by the remote's clock
	// against this machine's (a file:// remote on a shared file system: the file's
	// modification time).
	Age time.Duration
	// TTL is this remote's lease lifetime: a lease older than it is no longer renewed.
	TTL time.Duration
}

// Stale reports whether the lease is no longer renewed: held, and not rewritten for a TTL
// (heartbeats come every TTL/3).
func (l LeaseInfo) Stale() bool { return l.Held && l.Age > l.TTL }

// LeaseTTL is how long this process's leases outlive their last heartbeat.
func (r *Remote) LeaseTTL() time.Duration { return r.ttl }

// LeaseOf reads stage key's lease without touching it; ttl is the lease lifetime its
// holder uses (0: this process's).
func (r *Remote) LeaseOf(ctx context.Context, key artifacts.Digest, ttl time.Duration) (LeaseInfo, error) {
	if ttl <= 0 {
		ttl = r.ttl
	}
	info := LeaseInfo{TTL: ttl}
	objs, err := r.objs.Scan(ctx, r.object(leasePrefix(key)))
	if err != nil {
		return info, r.scrub(err)
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].Name > objs[j].Name }) // zero-padded: newest first
	for _, o := range objs {
		raw, found, err := r.get(ctx, r.object(leasePrefix(key)+o.Name))
		if err != nil {
			return info, r.scrub(err)
		}
		if !found {
			continue
		}
		var rec leaseRecord
		_ = json.Unmarshal(raw, &rec)
		var gen int
		for _, c := range o.Name {
			if c >= '0' && c <= '9' {
				gen = gen*10 + int(c-'0')
			}
		}
		info.Held, info.Holder, info.Generation, info.Age = true, rec.Holder, gen, time.Since(o.Modified)
		return info, nil
	}
	return info, nil
}
