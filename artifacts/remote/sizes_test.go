//go:build unix

package remote

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
)

// oldEntry pushes a result into a directory remote and rewrites its entry as entries were
// written before sizes were recorded (no "sizes"); it returns the key and the entry file.
func oldEntry(t *testing.T, ctx context.Context, r *Remote, dir string) (artifacts.Digest, string, artifacts.Action) {
	t.Helper()
	store, err := artifacts.Open(filepath.Join(t.TempDir(), "store"), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	a := artifacts.Action{Outputs: map[string]artifacts.Digest{}, Meta: map[string]string{"name": "train x seed=0"}}
	for i, name := range []string{"metrics", "summary"} {
		d, err := store.Put(make([]byte, 1000+i*5000))
		if err != nil {
			t.Fatal(err)
		}
		a.Outputs[name] = d
	}
	key := artifacts.Sum([]byte("old entry"))
	if err := store.PutAction(key, a); err != nil {
		t.Fatal(err)
	}
	if _, err := r.PushAction(ctx, store, key, a); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(dir, "ac", key.String())
	raw, _ := json.Marshal(actionRecord{V: recordVersion, Outputs: a.Outputs, Meta: a.Meta})
	if err := os.WriteFile(entry, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return key, entry, a
}

// RecordSizes gives an old entry its outputs' sizes from the blobs, changing nothing
// else, leaves complete entries alone, and a second pass has nothing to do.
func TestRecordSizesRewritesOldEntries(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "kept")
	r, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	key, entry, a := oldEntry(t, ctx, r, dir)
	rep, err := r.RecordSizes(ctx)
	if err != nil || len(rep.Rewritten) != 1 || rep.Rewritten[0] != key || len(rep.Skipped) != 0 {
		t.Fatalf("RecordSizes: %+v, %v", rep, err)
	}
	var rec actionRecord
	raw, _ := os.ReadFile(entry)
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.V != recordVersion || rec.Meta["name"] != a.Meta["name"] || len(rec.Outputs) != 2 ||
		rec.Sizes["metrics"] != 1000 || rec.Sizes["summary"] != 6000 {
		t.Errorf("rewritten entry: %s", raw)
	}
	if rep, err := r.RecordSizes(ctx); err != nil || len(rep.Rewritten) != 0 || rep.Complete != 1 {
		t.Errorf("second pass: %+v, %v", rep, err)
	}
}

// Every kept entry (reproduced/ac) records each output's size (issue 61: 20 of 52 did
// not, so a reader allowed them 8 GiB), and a 3 GiB sparse file in place of a kept blob is
// refused in under 2 s without reading it (before: exit 4 after 20 s and 7 GB).
func TestKeptEntriesBoundTheirBlobs(t *testing.T) {
	kept := filepath.Join("..", "..", "reproduced")
	entries, err := filepath.Glob(filepath.Join(kept, "ac", "*"))
	if err != nil || len(entries) == 0 {
		t.Fatalf("no kept entries in %s: %v", kept, err)
	}
	for _, e := range entries {
		var rec actionRecord
		raw, err := os.ReadFile(e)
		if err == nil {
			err = json.Unmarshal(raw, &rec)
		}
		if err != nil {
			t.Fatal(err)
		}
		for name := range rec.Outputs {
			if _, ok := rec.Sizes[name]; !ok {
				t.Errorf("%s: output %s has no recorded size", e, name)
			}
		}
	}
	if t.Failed() {
		t.FailNow() // without sizes the stand-in below would be read whole
	}
	// The stand-in: a copy of the kept directory with one blob of the first entry that
	// had no sizes replaced by a 3 GiB sparse file.
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "kept")
	if err := os.CopyFS(dir, os.DirFS(kept)); err != nil {
		t.Fatal(err)
	}
	const formerlySizeless = "805d44c569c91b657686883e26e4e1eacb53e1d993a9ac2053c77188c6bfb363"
	raw, err := os.ReadFile(filepath.Join(dir, "ac", formerlySizeless))
	if err != nil {
		t.Fatal(err)
	}
	var rec actionRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	blob := filepath.Join(dir, "cas", rec.Outputs["summary"].String())
	if err := os.Truncate(blob, 3<<30); err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
	r, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.Open(filepath.Join(t.TempDir(), "store"), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	key, _ := artifacts.ParseDigest(formerlySizeless)
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, ok, _, err := r.FetchAction(ctx, store, key)
	took := time.Since(start)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if ok || !errors.Is(err, artifacts.ErrNotFound) {
		t.Fatalf("the stand-in was taken: ok %v, %v", ok, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; took > 2*time.Second || alloc > 200<<20 {
		t.Errorf("refusing the stand-in took %v and %d MB", took, alloc>>20)
	}
	t.Logf("refused in %v: %v", took, err)
}

// An entry's sizes are bound with its outputs: deleting them, or inflating one, after the
// entry was written makes it unbound (ErrUnbound) at once, before a blob is read.
func TestEntrySizesAreBound(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "remote")
	r, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.Open(filepath.Join(t.TempDir(), "store"), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	d, err := store.Put(make([]byte, 4000))
	if err != nil {
		t.Fatal(err)
	}
	a := artifacts.Action{Outputs: map[string]artifacts.Digest{"metrics": d}, Meta: map[string]string{"name": "train x seed=0"}}
	key := artifacts.Sum([]byte("sized entry"))
	if _, err := r.PushAction(ctx, store, key, a); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(dir, "ac", key.String())
	orig, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(m map[string]any)
	}{
		{"sizes deleted", func(m map[string]any) { delete(m, "sizes") }},
		{"size inflated", func(m map[string]any) { m["sizes"] = map[string]any{"metrics": 3 << 30} }},
	} {
		var m map[string]any
		json.Unmarshal(orig, &m)
		c.edit(m)
		b, _ := json.Marshal(m)
		if err := os.WriteFile(entry, b, 0o644); err != nil {
			t.Fatal(err)
		}
		dst, err := artifacts.Open(filepath.Join(t.TempDir(), "dst"), artifacts.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, ok, _, err := r.FetchAction(ctx, dst, key)
		dst.Close()
		if ok || !errors.Is(err, ErrUnbound) {
			t.Errorf("%s: ok %v, %v; want refused as unbound", c.name, ok, err)
		}
	}
}
