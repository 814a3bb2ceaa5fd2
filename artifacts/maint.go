package artifacts

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// keysWithPrefix lists the keys under prefix, without the prefix.
// A damaged stretch of the tables fails it with ErrDamaged (scanKeys).
func (s *Store) keysWithPrefix(prefix string) ([][]byte, error) {
	keys, _, err := s.scanKeys(prefix, false)
	return keys, err
}

// Blobs lists the digests of every blob record in the store (verified or not).
func (s *Store) Blobs() ([]Digest, error) {
	keys, err := s.keysWithPrefix(prefixBlob)
	out := make([]Digest, 0, len(keys))
	for _, k := range keys {
		var d Digest
		copy(d[:], k)
		out = append(out, d)
	}
	return out, err
}

// Actions returns every readable action record by key, without verifying outputs.
func (s *Store) Actions() (map[Digest]Action, error) {
	out := map[Digest]Action{}
	err := s.view(func(txn *badger.Txn) error {
		opt := badger.DefaultIteratorOptions
		opt.Prefix = []byte(prefixAction)
		it := txn.NewIterator(opt)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var key Digest
			copy(key[:], it.Item().Key()[len(prefixAction):])
			var rec actionRecord
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &rec) }); err != nil || rec.V != actionVersion {
				continue
			}
			out[key] = Action{Outputs: rec.Outputs, Meta: rec.Meta}
		}
		return nil
	})
	return out, err
}

// Refs returns every ref by name.
func (s *Store) Refs() (map[string]Digest, error) {
	keys, err := s.keysWithPrefix(prefixRef)
	if err != nil {
		return nil, err
	}
	out := map[string]Digest{}
	for _, k := range keys {
		if d, ok, err := s.GetRef(string(k)); err == nil && ok {
			out[string(k)] = d
		}
	}
	return out, nil
}

// FsckReport is the result of checking a whole store.
type FsckReport struct {
	Blobs, CorruptBlobs    int
	Actions, BrokenActions int
	Refs, DanglingRefs     int
	Problems               []string
}

// OK reports whether nothing was wrong.
func (r FsckReport) OK() bool { return r.CorruptBlobs+r.BrokenActions+r.DanglingRefs == 0 }

// Fsck re-hashes every blob, checks that every action's outputs are intact and every ref
// points at a blob. It changes nothing: a corrupt entry is already treated as a miss by
// every read, and the next run that needs it recomputes it.
func (s *Store) Fsck() (FsckReport, error) {
	var r FsckReport
	blobs, err := s.Blobs()
	if err != nil {
		return r, err
	}
	bad := map[Digest]bool{}
	for _, d := range blobs {
		r.Blobs++
		if err := s.Verify(d); err != nil {
			if !errors.Is(err, ErrNotFound) {
				return r, err
			}
			r.CorruptBlobs++
			bad[d] = true
			r.Problems = append(r.Problems, fmt.Sprintf("blob %s: %v", d, err))
		}
	}
	actions, err := s.Actions()
	if err != nil {
		return r, err
	}
	for key, a := range actions {
		r.Actions++
		for _, name := range sortedNames(a.Outputs) {
			d := a.Outputs[name]
			if ok, _ := s.Has(d); !ok || bad[d] {
				r.BrokenActions++
				r.Problems = append(r.Problems, fmt.Sprintf("action %s (%s): output %s (blob %s) missing or corrupt", key, a.Meta["name"], name, d))
				break
			}
		}
	}
	refs, err := s.Refs()
	if err != nil {
		return r, err
	}
	for name, d := range refs {
		r.Refs++
		if ok, _ := s.Has(d); !ok || bad[d] {
			r.DanglingRefs++
			r.Problems = append(r.Problems, fmt.Sprintf("ref %s: blob %s missing or corrupt", name, d))
		}
	}
	return r, nil
}

// GCReport says what a collection removed.
type GCReport struct {
	Actions, Blobs, Chunks int
	Bytes                  int64 // chunk and inline bytes no longer referenced
	// DiskBefore and DiskAfter are the sizes of the store directory's files before the
	// collection and after it gave the space back (GC only; see DiskBytes).
	DiskBefore, DiskAfter int64
	// Unreclaimed says why GC left the value log as it was ("": it did not), the
	// deletions standing: a reader's snapshot shared its files (see reclaim).
	Unreclaimed string
}

// GC deletes every action whose key is not in keep, then every blob not in live (the
// caller's set: outputs of kept actions plus whatever refs and their contents reach),
// then every chunk no remaining blob uses, and finally asks Badger to reclaim value-log
// space. Refs are never deleted.
func (s *Store) GC(keep map[Digest]bool, live map[Digest]bool) (GCReport, error) {
	return s.collect(keep, live, false)
}

// GCDryRun reports what GC(keep, live) would remove, removing nothing.
func (s *Store) GCDryRun(keep map[Digest]bool, live map[Digest]bool) (GCReport, error) {
	return s.collect(keep, live, true)
}

// collect is GC, or with dry only its report.
func (s *Store) collect(keep map[Digest]bool, live map[Digest]bool, dry bool) (GCReport, error) {
	r := GCReport{DiskBefore: s.DiskBytes()}
	actions, err := s.Actions()
	if err != nil {
		return r, err
	}
	for key := range actions {
		if !keep[key] {
			if err := s.deleteKey(actionKey(key), dry); err != nil {
				return r, err
			}
			r.Actions++
		}
	}
	blobs, err := s.Blobs()
	if err != nil {
		return r, err
	}
	usedChunks := map[Digest]bool{}
	for _, d := range blobs {
		var rec blobRecord
		var recErr error
		err := s.view(func(txn *badger.Txn) error {
			item, err := txn.Get(blobKey(d))
			if err != nil {
				return err
			}
			return item.Value(func(v []byte) error {
				rec, recErr = decodeRecord(append([]byte(nil), v...))
				return nil
			})
		})
		if err != nil {
			return r, err
		}
		if live[d] && recErr == nil {
			for _, c := range rec.chunks {
				usedChunks[c.d] = true
			}
			continue
		}
		if err := s.deleteKey(blobKey(d), dry); err != nil {
			return r, err
		}
		r.Blobs++
		r.Bytes += int64(len(rec.inline))
	}
	chunkKeys, err := s.keysWithPrefix(prefixChunk)
	if err != nil {
		return r, err
	}
	for _, k := range chunkKeys {
		var d Digest
		copy(d[:], k)
		if usedChunks[d] {
			continue
		}
		var size int
		_ = s.view(func(txn *badger.Txn) error {
			item, err := txn.Get(chunkKey(d))
			if err == nil {
				size = int(item.ValueSize())
			}
			return nil
		})
		if err := s.deleteKey(chunkKey(d), dry); err != nil {
			return r, err
		}
		r.Chunks++
		r.Bytes += int64(size)
	}
	if !dry { // also what an earlier GC deleted but could not free
		var err error
		if r.Unreclaimed, err = s.reclaim(); err != nil {
			return r, err
		}
		r.DiskAfter = s.DiskBytes()
	}
	return r, nil
}

// reclaimMarker names the file reclaim keeps in the store's directory while it may
// rewrite the value log; OpenReader does not link a snapshot to a store that has one.
const reclaimMarker = "fedpipe.reclaiming"

// watermarkSettle is how long reclaim lets a freshly opened Badger publish its read
// watermark before compacting (a goroutine's single step: microseconds when idle).
const watermarkSettle = 200 * time.Millisecond

// reclaimWait is how long reclaim waits for readers' snapshots to let go of the value log.
var reclaimWait = time.Minute

// reclaim gives the disk space of deleted values back. Badger rewrites a value-log file
// only once compaction has counted its entries as discarded, and compaction sees a
// deletion only after it leaves the memtable, so deleting alone frees nothing on disk (a
// 37 GB store of which GC removed 34 GB kept its 37 GB). reclaim therefore closes Badger
// (which writes the memtable to level 0), reopens it to compact every level into one
// (Flatten) and level 0 into the rest as it closes again, which drops the deleted and
// overwritten entries and records what each value-log file no longer needs, and then
// reopens it and rewrites every value-log file at least half of which is garbage. The
// caller holds the store's lock, so nothing else writes meanwhile.
//
// Badger deletes a rewritten file by truncating it, and a reader's snapshot (OpenReader)
// may hard-link that very file, which would then vanish under the reader. So reclaim
// first puts up reclaimMarker, which keeps new snapshots from linking, then waits up to
// reclaimWait for the links of existing snapshots to go; if they stay, it rewrites nothing
// and says why (the deletions stand; a later GC gives their space back).
func (s *Store) reclaim() (unreclaimed string, err error) {
	marker := filepath.Join(s.dir, reclaimMarker)
	if err := os.WriteFile(marker, lockRecord(), 0o666); err != nil {
		return "", fmt.Errorf("artifacts: store %s: %w", s.dir, err)
	}
	defer os.Remove(marker)
	for deadline := time.Now().Add(reclaimWait); ; time.Sleep(50 * time.Millisecond) {
		linked := s.linkedValueLogs()
		if linked == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("%d value-log files are shared with a reader's snapshot (fedpipe ls, report, export, status … reading the store while gc held it); run gc again when no reader is running", linked), nil
		}
	}
	reopen := func(opt badger.Options) error {
		if err := s.closeDB(); err != nil {
			return err
		}
		db, err := badger.Open(opt)
		if err != nil {
			return fmt.Errorf("artifacts: reopen store %s to reclaim space: %w", s.dir, err)
		}
		s.db = db
		return nil
	}
	// Compaction drops an entry only at or below the oldest version a reader may still
	// see, a watermark Badger sets when it opens but advances in a goroutine of its own:
	// a compaction right after opening can find it behind and drop nothing, and the merged
	// level is then never merged again (seen under load: TestGCReclaimsDiskSpace freed
	// nothing). So the store reopens with no background compactor, waits for the
	// watermark, and compacts by hand: Flatten merges the levels, and closing compacts
	// level 0 (the deletions) into them.
	if err := reopen(badgerOptions(s.dir, s.logf).WithNumCompactors(0).WithCompactL0OnClose(true)); err != nil {
		return "", err
	}
	time.Sleep(watermarkSettle)
	if err := s.db.Flatten(2); err != nil {
		return "", fmt.Errorf("artifacts: compact store %s: %w", s.dir, err)
	}
	if err := reopen(badgerOptions(s.dir, s.logf)); err != nil {
		return "", err
	}
	for s.db.RunValueLogGC(0.5) == nil {
		s.ReleaseMapped() // each rewrite reads a value-log file through its mapping
	}
	s.ReleaseMapped()
	return "", nil
}

// linkedValueLogs counts the store's value-log files that a live reader's snapshot shares:
// those with another name (the hard links of an older fedpipe's snapshots), and those a
// snapshot whose reader still holds its lock links by name (reader.go).
func (s *Store) linkedValueLogs() int {
	logs, _ := filepath.Glob(filepath.Join(s.dir, "*.vlog"))
	shared := map[string]bool{}
	for _, p := range logs {
		if linkCount(p) > 1 {
			shared[filepath.Base(p)] = true
		}
	}
	for _, name := range symlinkedValueLogs(s.dir) {
		shared[name] = true
	}
	return len(shared)
}

// DiskBytes is what the regular files in the store's directory take on disk: the blocks
// allocated to them (as du counts), not their apparent sizes, which include the value-log
// and memtable files Badger extends ahead of its writes (sparse, up to twice 64 MiB).
func (s *Store) DiskBytes() int64 {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return 0
	}
	var total int64
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			total += allocatedBytes(fi)
		}
	}
	return total
}

// deleteKey deletes key, unless dry.
func (s *Store) deleteKey(key []byte, dry bool) error {
	if dry {
		return nil
	}
	return s.update(func(txn *badger.Txn) error { return txn.Delete(key) })
}
