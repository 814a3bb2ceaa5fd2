package remote

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
)

// age sets back the modification time of every object under folder ("cas/", "ac/", …)
// by d, as if written that long ago.
func age(t *testing.T, s place, r *Remote, folder string, d time.Duration) {
	t.Helper()
	objs, err := r.objs.Scan(context.Background(), r.object(folder))
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-d)
	for _, o := range objs {
		if err := os.Chtimes(s.objectPath(folder+o.Name), old, old); err != nil {
			t.Fatal(err)
		}
	}
	again, err := r.objs.Scan(context.Background(), r.object(folder))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range again {
		if time.Since(o.Modified) < d-time.Minute {
			t.Fatalf("%s%s: the server says it was modified at %v; cannot age it", folder, o.Name, o.Modified)
		}
	}
}

// has reports whether the remote holds object name.
func has(t *testing.T, r *Remote, name string) bool {
	t.Helper()
	ok, err := r.exists(context.Background(), r.object(name))
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// GC keeps the entries of the stages it is told to keep (a partial one included), their
// blobs even when a dropped entry names them too, and everything of a stage whose lease
// is live; it drops the other entries and checkpoints, the old blobs nothing kept names
// and expired leases, and spares young unreferenced blobs and files that are not objects.
// A dry run lists the same, with sizes, and deletes nothing.
func TestGCKeepsLiveAndReferencedDropsTheRest(t *testing.T) {
	eachBackend(t, testGCKeepsLiveAndReferencedDropsTheRest)
}

func testGCKeepsLiveAndReferencedDropsTheRest(t *testing.T, s place) {
	ctx := context.Background()
	r, _ := s.open(t, Options{Holder: "gc"})
	st := openStore(t)

	kept, keptA := putAction(t, st, 1)
	partKey, partA := putAction(t, st, 2)
	dropKey, dropA := putAction(t, st, 3)
	// The dropped entry also names the kept entry's model: that blob must stay.
	dropA.Outputs["shared"] = keptA.Outputs["model"]
	if err := st.PutAction(dropKey, dropA); err != nil {
		t.Fatal(err)
	}
	for key, a := range map[artifacts.Digest]artifacts.Action{kept: keptA, dropKey: dropA} {
		if _, err := r.PushAction(ctx, st, key, a); err != nil {
			t.Fatal(err)
		}
	}
	partial, _, err := r.PushPartialAction(ctx, st, partKey, partA, func(o string) bool { return o == "metrics" })
	if err != nil {
		t.Fatal(err)
	}
	// A stage a live worker trains, and one whose worker died, each with a checkpoint.
	liveKey, deadKey := artifacts.Sum([]byte("train live")), artifacts.Sum([]byte("train dead"))
	w, _ := s.open(t, Options{Holder: "worker", LeaseTTL: 3 * time.Second})
	lease, _, err := w.TryLease(ctx, liveKey)
	if err != nil || lease == nil {
		t.Fatalf("claim: %v %v", lease, err)
	}
	defer lease.Release(ctx)
	cps := map[artifacts.Digest]Checkpoint{}
	for i, key := range []artifacts.Digest{liveKey, deadKey} {
		idx, _ := st.Put([]byte("index " + key.String()))
		blob, _ := st.Put([]byte("client state " + key.String()))
		cps[key] = Checkpoint{Round: 3 + i, Index: idx, Blobs: []artifacts.Digest{blob}}
		if _, err := w.PushCheckpoint(ctx, st, key, cps[key]); err != nil {
			t.Fatal(err)
		}
	}
	rec, _ := json.Marshal(leaseRecord{Holder: "dead worker", TTL: 3})
	if _, err := r.objs.Create(ctx, r.object(leaseObject(deadKey, 0)), rec, "application/json"); err != nil {
		t.Fatal(err)
	}
	orphan, _, err := r.PutBlob(ctx, []byte("a blob of a result deleted long ago"))
	if err != nil {
		t.Fatal(err)
	}
	for _, folder := range []string{"cas/", "ac/", "ckpt/"} {
		age(t, s, r, folder, 2*time.Hour)
	}
	age(t, s, r, leasePrefix(deadKey), 2*time.Hour)
	young, _, err := r.PutBlob(ctx, []byte("a blob whose entry is being written"))
	if err != nil {
		t.Fatal(err)
	}
	var notObjects []string
	if !strings.HasPrefix(s.address, "s3:") {
		// A kept-results directory's index and README are no objects of the protocol, nor a
		// temporary file being written (dirremote names them .tmp-…).
		for _, name := range []string{"cells/m/train.json", "README.md", "cas/.tmp-x"} {
			if err := WriteFileAtomic(s.objectPath(name), []byte("{}")); err != nil {
				t.Fatal(err)
			}
			notObjects = append(notObjects, s.objectPath(name))
		}
	}

	opt := GCOptions{Keep: map[artifacts.Digest]bool{kept: true, partKey: true}, Grace: time.Hour, DryRun: true}
	dry, err := r.GC(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"result " + dropKey.Short():                true,
		"checkpoint " + deadKey.Short():            true,
		"blob " + dropA.Outputs["metrics"].Short(): true,
		"blob " + dropA.Outputs["model"].Short():   true,
		"blob " + orphan.Short():                   true,
		"blob " + cps[deadKey].Index.Short():       true,
		"blob " + cps[deadKey].Blobs[0].Short():    true,
		"lease " + deadKey.Short():                 true,
	}
	var total int64
	for _, it := range dry.Removed {
		id := it.Kind + " " + it.Key.Short()
		if !want[id] {
			t.Errorf("the dry run would remove %s (%s, %d bytes), which must stay", id, it.Name, it.Size)
		}
		delete(want, id)
		if it.Size <= 0 {
			t.Errorf("%s: size %d", id, it.Size)
		}
		if it.Kind == GCResult && it.Name != "train x" {
			t.Errorf("%s: name %q, want the entry's", id, it.Name)
		}
		total += it.Size
	}
	for id := range want {
		t.Errorf("the dry run does not list %s", id)
	}
	if dry.Bytes != total || dry.Results != 1 || dry.Checkpoints != 1 || dry.Blobs != 5 || dry.Leases != 1 {
		t.Errorf("dry run: %d bytes (items sum to %d), %d results, %d checkpoints, %d blobs, %d leases",
			dry.Bytes, total, dry.Results, dry.Checkpoints, dry.Blobs, dry.Leases)
	}
	if dry.LiveStages != 1 || dry.Young != 1 || dry.KeptResults != 2 {
		t.Errorf("dry run: %d live stages (want 1), %d young (want 1), %d results kept (want 2)", dry.LiveStages, dry.Young, dry.KeptResults)
	}
	for _, it := range dry.Removed {
		obj := map[string]string{GCResult: actionObject(it.Key), GCCheckpoint: checkpointObject(it.Key),
			GCBlob: blobObject(it.Key), GCLease: leaseObject(it.Key, 0)}[it.Kind]
		if !has(t, r, obj) {
			t.Errorf("the dry run deleted %s", obj)
		}
	}

	opt.DryRun = false
	done, err := r.GC(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(done.Removed) != len(dry.Removed) || done.Bytes != dry.Bytes {
		t.Errorf("gc removed %d objects (%d bytes); the dry run said %d (%d bytes)", len(done.Removed), done.Bytes, len(dry.Removed), dry.Bytes)
	}
	for _, it := range done.Removed {
		obj := map[string]string{GCResult: actionObject(it.Key), GCCheckpoint: checkpointObject(it.Key),
			GCBlob: blobObject(it.Key), GCLease: leaseObject(it.Key, 0)}[it.Kind]
		if has(t, r, obj) {
			t.Errorf("%s is still there", obj)
		}
	}

	// What stays is whole: a fresh machine fetches the kept entries and the live stage's
	// checkpoint.
	other, _ := s.open(t, Options{})
	dst := openStore(t)
	for key, a := range map[artifacts.Digest]artifacts.Action{kept: keptA, partKey: partial} {
		got, ok, _, err := other.FetchAction(ctx, dst, key)
		if err != nil || !ok || len(got.Outputs) != len(a.Outputs) {
			t.Errorf("kept entry %s after gc: ok=%v err=%v outputs %v", key.Short(), ok, err, got.Outputs)
		}
	}
	if ok, _ := other.HasAction(ctx, dropKey); ok {
		t.Error("the dropped entry is still served")
	}
	if cp, ok, _, err := other.FetchCheckpoint(ctx, dst, liveKey, 0); err != nil || !ok || cp.Round != 3 {
		t.Errorf("the live stage's checkpoint after gc: %v %v %+v", ok, err, cp)
	}
	if !has(t, r, blobObject(young)) {
		t.Error("a blob written a moment ago was deleted")
	}
	if !has(t, r, leaseObject(liveKey, 0)) {
		t.Error("the live lease was deleted")
	}
	select {
	case <-lease.Lost():
		t.Error("the live worker lost its lease")
	default:
	}
	for _, p := range notObjects {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("gc touched %s, which is no object: %v", filepath.Base(p), err)
		}
	}
}

// Without a grace period young unreferenced blobs go too; --keep-recent keeps entries
// written lately, and their blobs.
func TestGCGraceAndKeepRecent(t *testing.T) { eachBackend(t, testGCGraceAndKeepRecent) }

func testGCGraceAndKeepRecent(t *testing.T, s place) {
	ctx := context.Background()
	r, _ := s.open(t, Options{})
	st := openStore(t)
	oldKey, oldA := putAction(t, st, 1)
	if _, err := r.PushAction(ctx, st, oldKey, oldA); err != nil {
		t.Fatal(err)
	}
	age(t, s, r, "ac/", 3*time.Hour)
	age(t, s, r, "cas/", 3*time.Hour)
	newKey, newA := putAction(t, st, 2)
	if _, err := r.PushAction(ctx, st, newKey, newA); err != nil {
		t.Fatal(err)
	}
	orphan, _, _ := r.PutBlob(ctx, []byte("unreferenced, just written"))

	rep, err := r.GC(ctx, GCOptions{KeepRecent: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Results != 1 || rep.Removed[0].Key != oldKey {
		t.Errorf("keep-recent 1h removed %+v; want the 3-hour-old entry only", rep.Removed)
	}
	if ok, err := r.HasAction(ctx, newKey); err != nil || !ok {
		t.Errorf("the entry written now is gone: %v %v", ok, err)
	}
	if has(t, r, blobObject(orphan)) {
		t.Error("with no grace, an unreferenced blob survived")
	}
}

// Entries written while GC runs keep their blobs: the second listing finds them.
func TestGCRereadsEntriesWrittenMeanwhile(t *testing.T) {
	eachBackend(t, testGCRereadsEntriesWrittenMeanwhile)
}

func testGCRereadsEntriesWrittenMeanwhile(t *testing.T, s place) {
	ctx := context.Background()
	r, _ := s.open(t, Options{})
	st := openStore(t)
	key, a := putAction(t, st, 1)
	for _, d := range a.Outputs {
		data, _ := st.Get(d)
		r.PutBlob(ctx, data)
	}
	first, err := r.objs.Scan(ctx, r.object("ac/"))
	if err != nil || len(first) != 0 {
		t.Fatalf("first listing: %v %v", first, err)
	}
	// A writer found the blobs present and records its entry after the first listing.
	if _, err := r.PushAction(ctx, st, key, a); err != nil {
		t.Fatal(err)
	}
	refs := map[artifacts.Digest]bool{}
	if err := r.refsWrittenSince(ctx, first, nil, refs); err != nil {
		t.Fatal(err)
	}
	for name, d := range a.Outputs {
		if !refs[d] {
			t.Errorf("the blob of %s, named by an entry written meanwhile, is not kept", name)
		}
	}
}
