package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote/backend"
)

// Garbage collection of a remote (fedpipe gc --remote) drops the action entries nobody
// keeps, the checkpoints of stages nobody keeps, then the blobs nothing kept references,
// while other processes may be reading and writing the remote. What it never deletes:
//
//   - anything of a stage whose lease is live (its newest lease object was rewritten less
//     than twice its TTL, or Grace, ago): a worker is running it, and its checkpoint,
//     the checkpoint's blobs and any entry of that stage stay;
//   - any object written less than Grace ago, referenced or not: a writer uploads a
//     result's blobs before its entry (remote.go), so a young unreferenced blob may be
//     waiting for an entry not yet written;
//   - objects outside cas/, ac/, ckpt/ and lease/ (a kept-results directory's cells/
//     index and README, temporary files).
//
// The order narrows the one race left. Entries and checkpoints are deleted first (the
// references, before what they reference); then ac/ and ckpt/ are listed again, and the
// blobs of every entry or checkpoint written meanwhile are kept too; then the blobs go.
// A writer that found an old unreferenced blob present (PutBlob uploads nothing then) and
// writes an entry naming it after that second listing, before the blob is deleted, leaves
// an entry whose blob is gone: readers treat it as a miss (FetchAction, StatAction) and
// recompute the stage, never return a wrong result. Run gc when no sweep writes to the
// remote to avoid even that.

// DefaultGCGrace is how long a remote's new objects are safe from GC by default.
const DefaultGCGrace = time.Hour

// GCOptions says what GC keeps.
type GCOptions struct {
	// Keep holds the stage keys whose entries and checkpoints stay (the stages of the
	// manifests still in use).
	Keep map[artifacts.Digest]bool
	// KeepRecent, if positive, also keeps every entry and checkpoint written to the remote,
	// or recorded (the entry's "created" meta), less than this long ago.
	KeepRecent time.Duration
	// Grace: no object written less than this long ago is deleted (see above). Zero means
	// none, for a remote nobody writes to meanwhile.
	Grace time.Duration
	// DryRun lists what would be removed and removes nothing.
	DryRun bool
}

// GC item kinds.
const (
	GCResult     = "result"
	GCCheckpoint = "checkpoint"
	GCBlob       = "blob"
	GCLease      = "lease"
)

// A GCItem is one object GC removed (or, dry, would remove).
type GCItem struct {
	// Kind is GCResult, GCCheckpoint, GCBlob or GCLease.
	Kind string
	// Key is the stage's key (a result, checkpoint or lease) or the blob's digest.
	Key artifacts.Digest
	// Name is a result's stage name as its entry records it ("" if none).
	Name string
	// Size is the object's size in bytes.
	Size int64
}

// GCReport says what GC removed, or would remove, and what it left.
type GCReport struct {
	// Removed lists the objects removed: results, checkpoints, blobs, leases, in that
	// order, each kind sorted by key.
	Removed []GCItem
	// Results, Checkpoints, Blobs and Leases count Removed by kind; Bytes is its total size.
	Results, Checkpoints, Blobs, Leases int
	Bytes                               int64
	// LiveStages counts the stages not kept otherwise that GC left alone because a worker
	// holds their lease.
	LiveStages int
	// Young counts the unreferenced blobs and unkept entries and checkpoints spared
	// because they were written less than Grace ago.
	Young int
	// KeptResults is the number of entries left; KeptBlobs and KeptBytes the blobs left
	// and their size; BlobBytesBefore the blobs' size before.
	KeptResults, KeptBlobs     int
	KeptBytes, BlobBytesBefore int64
}

func (rep *GCReport) remove(it GCItem) {
	rep.Removed = append(rep.Removed, it)
	rep.Bytes += it.Size
	switch it.Kind {
	case GCResult:
		rep.Results++
	case GCCheckpoint:
		rep.Checkpoints++
	case GCBlob:
		rep.Blobs++
	case GCLease:
		rep.Leases++
	}
}

// gcRecord reads any version of an action entry leniently: whatever names outputs.
type gcRecord struct {
	Outputs map[string]artifacts.Digest `json:"outputs"`
	Meta    map[string]string           `json:"meta"`
}

// GC removes from the remote what opt does not keep (see the rules above) and reports
// it. Errors name the remote.
func (r *Remote) GC(ctx context.Context, opt GCOptions) (GCReport, error) {
	var rep GCReport
	now := time.Now()
	// within reports whether t is less than d ago (a time in the future counts).
	within := func(t time.Time, d time.Duration) bool { return d > 0 && now.Sub(t) < d }
	fail := func(what string, err error) (GCReport, error) {
		return rep, r.scrub(fmt.Errorf("remote %s: gc: %s: %w", r, what, err))
	}

	leases, err := r.objs.Scan(ctx, r.object("lease/"))
	if err != nil {
		return fail("list leases", err)
	}
	live := r.liveLeases(ctx, leases, now, opt.Grace)

	refs := map[artifacts.Digest]bool{} // blobs that stay
	keepStage := func(key artifacts.Digest, written time.Time) (keep, young bool) {
		switch {
		case opt.Keep[key], within(written, opt.KeepRecent):
			return true, false
		case live[key]:
			return true, false
		case within(written, opt.Grace):
			return true, true
		}
		return false, false
	}

	entries, err := r.objs.Scan(ctx, r.object("ac/"))
	if err != nil {
		return fail("list results", err)
	}
	var dropResults []GCItem
	for _, o := range entries {
		key, err := artifacts.ParseDigest(o.Name)
		if err != nil {
			continue // not an entry fedpipe wrote
		}
		rec, err := r.readGCRecord(ctx, actionObject(key))
		if err != nil {
			return fail("read result "+key.Short(), err)
		}
		keep, young := keepStage(key, o.Modified)
		if !keep && opt.KeepRecent > 0 {
			t, err := time.Parse(time.RFC3339, rec.Meta["created"])
			keep = err == nil && within(t, opt.KeepRecent)
		}
		if !keep {
			dropResults = append(dropResults, GCItem{Kind: GCResult, Key: key, Name: rec.Meta["name"], Size: o.Size})
			continue
		}
		if young {
			rep.Young++
		}
		rep.KeptResults++
		for _, d := range rec.Outputs {
			refs[d] = true
		}
	}

	ckpts, err := r.objs.Scan(ctx, r.object("ckpt/"))
	if err != nil {
		return fail("list checkpoints", err)
	}
	var dropCkpts []GCItem
	for _, o := range ckpts {
		key, err := artifacts.ParseDigest(o.Name)
		if err != nil {
			continue
		}
		keep, young := keepStage(key, o.Modified)
		if !keep {
			dropCkpts = append(dropCkpts, GCItem{Kind: GCCheckpoint, Key: key, Size: o.Size})
			continue
		}
		if young {
			rep.Young++
		}
		if err := r.checkpointRefs(ctx, key, refs); err != nil {
			return fail("read checkpoint "+key.Short(), err)
		}
	}
	for key := range live {
		if !opt.Keep[key] {
			rep.LiveStages++
		}
	}

	// The references go first.
	for _, drop := range [][]GCItem{sortItems(dropResults), sortItems(dropCkpts)} {
		for _, it := range drop {
			if !opt.DryRun {
				obj := actionObject(it.Key)
				if it.Kind == GCCheckpoint {
					obj = checkpointObject(it.Key)
				}
				if err := r.objs.Remove(ctx, r.object(obj)); err != nil {
					return fail("remove "+it.Kind+" "+it.Key.Short(), err)
				}
			}
			rep.remove(it)
		}
	}

	// Entries and checkpoints written since the first listing keep their blobs.
	if err := r.refsWrittenSince(ctx, entries, ckpts, refs); err != nil {
		return fail("list results again", err)
	}
	blobs, err := r.objs.Scan(ctx, r.object("cas/"))
	if err != nil {
		return fail("list blobs", err)
	}
	var dropBlobs []GCItem
	for _, o := range blobs {
		rep.BlobBytesBefore += o.Size
		d, err := artifacts.ParseDigest(o.Name)
		switch {
		case err != nil || refs[d]:
		case within(o.Modified, opt.Grace):
			rep.Young++
		default:
			dropBlobs = append(dropBlobs, GCItem{Kind: GCBlob, Key: d, Size: o.Size})
			continue
		}
		rep.KeptBlobs++
		rep.KeptBytes += o.Size
	}
	for _, it := range sortItems(dropBlobs) {
		if !opt.DryRun {
			if err := r.objs.Remove(ctx, r.object(blobObject(it.Key))); err != nil {
				return fail("remove blob "+it.Key.Short(), err)
			}
			r.mu.Lock()
			delete(r.present, it.Key)
			r.mu.Unlock()
		}
		rep.remove(it)
	}

	// Expired leases of stages nobody keeps: their holders are gone.
	var dropLeases []GCItem
	for _, o := range leases {
		k, _, _ := strings.Cut(o.Name, "/")
		key, err := artifacts.ParseDigest(k)
		if err != nil || live[key] || opt.Keep[key] {
			continue
		}
		if !opt.DryRun {
			if err := r.objs.Remove(ctx, r.object("lease/"+o.Name)); err != nil {
				return fail("remove lease "+o.Name, err)
			}
		}
		dropLeases = append(dropLeases, GCItem{Kind: GCLease, Key: key, Size: o.Size})
	}
	for _, it := range sortItems(dropLeases) {
		rep.remove(it)
	}
	return rep, nil
}

// liveLeases returns the stages whose newest lease object was rewritten less than twice
// the TTL it records (DefaultLeaseTTL if unreadable), or grace, ago: a heartbeat comes
// every TTL/3, so a live holder's object is never older than that.
func (r *Remote) liveLeases(ctx context.Context, objs []backend.ObjectInfo, now time.Time, grace time.Duration) map[artifacts.Digest]bool {
	newest := map[artifacts.Digest]backend.ObjectInfo{}
	for _, o := range objs {
		k, _, _ := strings.Cut(o.Name, "/")
		key, err := artifacts.ParseDigest(k)
		if err != nil {
			continue
		}
		if n, ok := newest[key]; !ok || o.Modified.After(n.Modified) {
			newest[key] = o
		}
	}
	live := map[artifacts.Digest]bool{}
	for key, o := range newest {
		ttl := DefaultLeaseTTL
		raw, found, err := r.get(ctx, r.object("lease/"+o.Name))
		var rec leaseRecord
		if err == nil && found && json.Unmarshal(raw, &rec) == nil && rec.TTL > 0 {
			ttl = time.Duration(rec.TTL * float64(time.Second))
		}
		if now.Sub(o.Modified) < max(2*ttl, grace) {
			live[key] = true
		}
	}
	return live
}

// readGCRecord reads an entry leniently; an unreadable one names no output (it is a miss
// to every reader) and an absent one (deleted meanwhile) likewise.
func (r *Remote) readGCRecord(ctx context.Context, name string) (gcRecord, error) {
	raw, found, err := r.get(ctx, r.object(name))
	var rec gcRecord
	if err != nil || !found {
		return rec, err
	}
	if json.Unmarshal(raw, &rec) != nil {
		r.log("remote %s: %s is unreadable; gc treats it as naming no blob", r, name)
		return gcRecord{}, nil
	}
	return rec, nil
}

// checkpointRefs adds the blobs of the stage's checkpoint (its index and the blobs the
// index lists) to refs.
func (r *Remote) checkpointRefs(ctx context.Context, stage artifacts.Digest, refs map[artifacts.Digest]bool) error {
	raw, found, err := r.get(ctx, r.object(checkpointObject(stage)))
	if err != nil || !found {
		return err
	}
	var cp Checkpoint
	if json.Unmarshal(raw, &cp) != nil {
		return nil
	}
	refs[cp.Index] = true
	for _, d := range cp.Blobs {
		refs[d] = true
	}
	return nil
}

// refsWrittenSince lists ac/ and ckpt/ again and adds to refs the blobs of every entry or
// checkpoint not in the first listings (entries, ckpts) or rewritten since.
func (r *Remote) refsWrittenSince(ctx context.Context, entries, ckpts []backend.ObjectInfo, refs map[artifacts.Digest]bool) error {
	for _, kind := range []struct {
		folder string
		before []backend.ObjectInfo
	}{{"ac/", entries}, {"ckpt/", ckpts}} {
		seen := map[string]backend.ObjectInfo{}
		for _, o := range kind.before {
			seen[o.Name] = o
		}
		now, err := r.objs.Scan(ctx, r.object(kind.folder))
		if err != nil {
			return err
		}
		for _, o := range now {
			if was, ok := seen[o.Name]; ok && was.Size == o.Size && was.Modified.Equal(o.Modified) {
				continue
			}
			key, err := artifacts.ParseDigest(o.Name)
			if err != nil {
				continue
			}
			if kind.folder == "ckpt/" {
				if err := r.checkpointRefs(ctx, key, refs); err != nil {
					return err
				}
				continue
			}
			rec, err := r.readGCRecord(ctx, actionObject(key))
			if err != nil {
				return err
			}
			for _, d := range rec.Outputs {
				refs[d] = true
			}
		}
	}
	return nil
}

func sortItems(items []GCItem) []GCItem {
	sort.Slice(items, func(i, j int) bool { return items[i].Key.String() < items[j].Key.String() })
	return items
}
