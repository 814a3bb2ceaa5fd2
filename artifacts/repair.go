package artifacts

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// RepairReport says what Repair found and deleted.
type RepairReport struct {
	FsckReport
	// Deleted counts the records Repair removed.
	DeletedBlobs, DeletedChunks, DeletedActions, DeletedRefs int
}

// Repair deletes every blob that does not verify, every chunk whose bytes do not match its
// digest, every action with an unreadable record or a missing or corrupt output, and every
// ref to a missing blob. Nothing intact is touched; the next run recomputes what it needs
// of what was deleted, and a second Fsck is clean.
func (s *Store) Repair() (RepairReport, error) {
	var r RepairReport
	del := func(key []byte) error {
		return s.update(func(txn *badger.Txn) error { return txn.Delete(key) })
	}
	chunks, err := s.keysWithPrefix(prefixChunk)
	if err != nil {
		return r, err
	}
	for _, k := range chunks {
		var d Digest
		copy(d[:], k)
		ok := false
		verr := s.view(func(txn *badger.Txn) error {
			item, err := txn.Get(chunkKey(d))
			if err != nil {
				return err
			}
			return item.Value(func(v []byte) error { ok = Sum(v) == d; return nil })
		})
		if verr == nil && ok {
			continue
		}
		r.Problems = append(r.Problems, fmt.Sprintf("chunk %s: corrupt or unreadable: deleted", d))
		if err := del(chunkKey(d)); err != nil {
			return r, err
		}
		r.DeletedChunks++
	}
	blobs, err := s.Blobs()
	if err != nil {
		return r, err
	}
	for _, d := range blobs {
		r.Blobs++
		if err := s.Verify(d); err == nil {
			continue
		} else {
			r.Problems = append(r.Problems, fmt.Sprintf("blob %s: %v: deleted", d, err))
		}
		r.CorruptBlobs++
		if err := del(blobKey(d)); err != nil {
			return r, err
		}
		r.DeletedBlobs++
	}
	keys, err := s.keysWithPrefix(prefixAction)
	if err != nil {
		return r, err
	}
	actions, err := s.Actions()
	if err != nil {
		return r, err
	}
	for _, k := range keys {
		var key Digest
		copy(key[:], k)
		r.Actions++
		a, readable := actions[key]
		why := "unreadable record"
		if readable {
			why = ""
			for _, name := range sortedNames(a.Outputs) {
				if ok, _ := s.Has(a.Outputs[name]); !ok {
					why = fmt.Sprintf("output %s (blob %s) missing or corrupt", name, a.Outputs[name])
					break
				}
			}
		}
		if why == "" {
			continue
		}
		r.BrokenActions++
		r.Problems = append(r.Problems, fmt.Sprintf("action %s (%s): %s: deleted", key, a.Meta["name"], why))
		if err := del(actionKey(key)); err != nil {
			return r, err
		}
		r.DeletedActions++
	}
	refs, err := s.keysWithPrefix(prefixRef)
	if err != nil {
		return r, err
	}
	for _, k := range refs {
		r.Refs++
		d, ok, err := s.GetRef(string(k))
		if err == nil && ok {
			if has, _ := s.Has(d); has {
				continue
			}
		}
		r.DanglingRefs++
		r.Problems = append(r.Problems, fmt.Sprintf("ref %s: blob missing or corrupt: deleted", k))
		if err := del(refKey(string(k))); err != nil {
			return r, err
		}
		r.DeletedRefs++
	}
	return r, nil
}

// SalvageReport says what Salvage recovered and what it lost.
type SalvageReport struct {
	Blobs, LostBlobs     int
	Actions, LostActions int
	Refs, LostRefs       int
	// Fixes lists what had to be done to the damaged files to read them at all (a value-log
	// header reset, a file dropped); Lost names every entry that could not be recovered.
	Fixes, Lost []string
}

// vlogHeaderSize is the size of Badger's value-log file header: the data-key id (8 bytes,
// 0 for an unencrypted store such as fedpipe's) and a 12-byte IV.
const vlogHeaderSize = 20

// Salvage recovers the store in src, which Badger may be unable to open, into a new store
// in dst (which must not exist): it works on a copy of src's files, resets value-log headers
// whose data-key id cannot be right for an unencrypted store ("Invalid datakey id"), drops
// any file Badger still refuses, then copies every blob that verifies, every action whose
// outputs were all recovered and every ref whose blob was, and reports what was lost. src
// is never written; it must not be in use.
func Salvage(src, dst string, logf func(string, ...any)) (SalvageReport, error) {
	var r SalvageReport
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if _, err := os.Stat(dst); err == nil {
		return r, fmt.Errorf("artifacts: salvage: %s exists; name a new directory", dst)
	}
	if st, err := os.Stat(filepath.Join(src, badger.ManifestFilename)); err == nil && !st.Mode().IsRegular() {
		return r, fmt.Errorf("%w: salvage: the MANIFEST of %s is not a regular file (%v): without it no table can be placed; restore it from a backup",
			ErrDamaged, src, st.Mode().Type())
	}
	lock, err := acquire(src, -1, logf)
	if err != nil {
		return r, err
	}
	defer func() { unlock(lock); lock.Close() }()
	work, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dst)), ".fedpipe-salvage-")
	if err != nil {
		return r, fmt.Errorf("artifacts: salvage: %w", err)
	}
	defer os.RemoveAll(work)
	entries, err := os.ReadDir(src)
	if err != nil {
		return r, fmt.Errorf("artifacts: salvage: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == lockName || e.Name() == "LOCK" {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(work, e.Name())); err != nil {
			return r, fmt.Errorf("artifacts: salvage: copy %s: %w", e.Name(), err)
		}
		if strings.HasSuffix(e.Name(), ".vlog") {
			if fixed, err := resetVlogHeader(filepath.Join(work, e.Name())); err != nil {
				return r, err
			} else if fixed {
				r.Fixes = append(r.Fixes, fmt.Sprintf("value log %s: header named an encryption key in an unencrypted store; reset", e.Name()))
			}
		}
	}
	// A newest value log damaged before intact entries is kept whole: Badger would cut it.
	if d, err := checkNewestValueLog(work); err != nil {
		return r, fmt.Errorf("artifacts: salvage: %w", err)
	} else if d != nil {
		name, err := shieldValueLog(work)
		if err != nil {
			return r, fmt.Errorf("artifacts: salvage: %w", err)
		}
		r.Fixes = append(r.Fixes, fmt.Sprintf("value log %s: damaged entry at byte %d, intact entries from byte %d on; kept whole (new writes go to %s) and read past the damage", d.name, d.bad, d.next, name))
	}
	// Tables Badger cannot open (truncated, missing, a damaged index or footer) leave the
	// manifest; what their intact blocks hold is written back below.
	bad := checkTables(work, badgerOptions(work, logf))
	if len(bad) > 0 {
		if err := dropTables(work, bad); err != nil {
			return r, fmt.Errorf("artifacts: salvage: %w", err)
		}
	}
	old, err := openDamaged(work, &r, logf)
	if err != nil {
		return r, err
	}
	// Badger keeps a value log's read lock after a read of an entry whose header is
	// damaged fails ("Invalid read"), and its close then waits for that lock for ever: the
	// working copy, deleted below, is given only a short close.
	old.closeTimeout = 2 * time.Second
	defer old.Close()
	for _, b := range bad {
		fix := fmt.Sprintf("table %s: %s; dropped", b.name, b.why)
		n, note, lost, err := old.recoverTable(work, filepath.Join(work, b.name+".damaged"))
		r.Lost = append(r.Lost, lost...)
		switch {
		case errors.Is(err, os.ErrNotExist):
			fix += ", with every entry in it"
		case err != nil:
			return r, fmt.Errorf("artifacts: salvage: table %s: %w", b.name, err)
		default:
			fix += fmt.Sprintf(" after reading back its intact blocks (%s; %d entries restored)", note, n)
		}
		r.Fixes = append(r.Fixes, fix)
	}
	fresh, err := Open(dst, Options{LockTimeout: -1, Logf: logf})
	if err != nil {
		return r, err
	}
	defer fresh.Close()

	// Each listing reads on past a damaged stretch of the tables, and adds the keys that
	// the intact blocks of the tables hold: what neither finds is lost. A damaged entry
	// can also end a listing early without an error (Badger decodes a key past the
	// prefix), so the blocks' keys are always added.
	inBlocks := old.keysInIntactBlocks(work)
	list := func(prefix string) [][]byte {
		keys, gaps, _ := old.scanKeys(prefix, true)
		r.Lost = append(r.Lost, gaps...)
		seen := map[string]bool{}
		for _, k := range keys {
			seen[string(k)] = true
		}
		for _, k := range inBlocks {
			if !strings.HasPrefix(k, prefix) || seen[k[len(prefix):]] {
				continue
			}
			seen[k[len(prefix):]] = true
			keys = append(keys, []byte(k[len(prefix):]))
		}
		return keys
	}
	for _, k := range list(prefixBlob) {
		var d Digest
		copy(d[:], k)
		b, err := old.Get(d)
		if err == nil {
			_, err = fresh.Put(b)
		}
		if err != nil {
			r.LostBlobs++
			r.Lost = append(r.Lost, fmt.Sprintf("blob %s: %v", d, err))
			continue
		}
		r.Blobs++
	}
	for _, k := range list(prefixAction) {
		var key Digest
		copy(key[:], k)
		var rec actionRecord
		err := old.view(func(txn *badger.Txn) error {
			item, err := txn.Get(actionKey(key))
			if err != nil {
				return err
			}
			return item.Value(func(v []byte) error { return json.Unmarshal(v, &rec) })
		})
		if err == nil && (rec.V != actionVersion || rec.Outputs == nil) {
			err = errors.New("unreadable record")
		}
		if err == nil {
			err = fresh.PutAction(key, Action{Outputs: rec.Outputs, Meta: rec.Meta})
		}
		if err != nil {
			r.LostActions++
			r.Lost = append(r.Lost, fmt.Sprintf("action %s (%s): %v", key, rec.Meta["name"], err))
			continue
		}
		r.Actions++
	}
	for _, k := range list(prefixRef) {
		d, ok, err := old.GetRef(string(k))
		if err == nil && !ok {
			err = errors.New("unreadable")
		}
		if err == nil {
			if has, _ := fresh.Has(d); !has {
				err = fmt.Errorf("blob %s not recovered", d)
			}
		}
		if err == nil {
			err = fresh.PutRef(string(k), d)
		}
		if err != nil {
			r.LostRefs++
			r.Lost = append(r.Lost, fmt.Sprintf("ref %s: %v", k, err))
			continue
		}
		r.Refs++
	}
	return r, nil
}

// resetVlogHeader zeroes the data-key id of a value-log file whose id is not 0 (fedpipe
// never encrypts, so any other id is a damaged header). It reports whether it changed it.
func resetVlogHeader(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var h [vlogHeaderSize]byte
	if n, _ := f.ReadAt(h[:], 0); n < len(h) {
		return false, nil
	}
	if binary.BigEndian.Uint64(h[:8]) == 0 {
		return false, nil
	}
	_, err = f.WriteAt(make([]byte, 8), 0)
	return err == nil, err
}

var badgerFile = regexp.MustCompile(`\d{6}\.(vlog|mem)`)

// openDamaged opens the working copy, dropping the value-log or memtable file Badger names
// in its error until it opens (or no named file is left to drop).
func openDamaged(dir string, r *SalvageReport, logf func(string, ...any)) (*Store, error) {
	for {
		s, err := Open(dir, Options{LockTimeout: -1, Logf: logf, NoCompactions: true})
		if err == nil {
			return s, nil
		}
		names := badgerFile.FindAllString(err.Error(), -1)
		sort.Strings(names)
		dropped := false
		for _, n := range names {
			if os.Remove(filepath.Join(dir, n)) == nil {
				r.Fixes = append(r.Fixes, fmt.Sprintf("%s: unreadable (%v); dropped, with every value in it", n, err))
				dropped = true
				break
			}
		}
		if !dropped {
			return nil, fmt.Errorf("%w: salvage: the store cannot be opened even after repairs: %w", ErrDamaged, err)
		}
	}
}
