// Package artifacts is fedpipe's local content store and action cache, kept in
// one Badger database in one directory.
//
// The design is that of Go's build cache (cmd/go/internal/cache) and Bazel's
// AC/CAS split:
//
//   - The content store maps a Digest (SHA-256 of the bytes) to a blob. Blobs
//     larger than InlineMax are cut into content-defined chunks, each stored
//     once under its own digest, so an unchanged region shared by several
//     blobs (one client's model inside successive checkpoints) costs its bytes
//     once. Every read re-hashes every chunk and the whole blob; bytes that do
//     not match their digest are reported (through Options.Logf) and treated
//     as missing, never returned.
//   - The action cache maps an action key (a Digest the caller computes over a
//     canonical description of a stage: code version, parameters, input
//     digests) to an Action: named output digests plus metadata. PutAction
//     refuses an action whose outputs are not stored, and GetAction reports a
//     miss unless every output is present and intact, so a hit always means
//     "the outputs exist and are correct".
//   - Refs are a small mutable name → Digest map for resumable work that is
//     not content-addressed ("latest checkpoint of stage K").
//
// Invariants a caller may rely on:
//
//   - Get(d) returns either bytes whose SHA-256 is d, or an error.
//   - Put writes every chunk before the blob record that lists them, and a
//     caller writes outputs before the action that names them; a process
//     killed at any point leaves at worst unreferenced chunks, never a record
//     pointing at nothing that looks complete.
//   - At most one process has a store directory open at a time (Open waits
//     for the current holder, up to Options.LockTimeout).
//
// A Store is safe for concurrent use by multiple goroutines.
package artifacts

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// ErrNotFound is returned (possibly wrapped; test with errors.Is) when a blob,
// chunk or record is missing, or is present but fails verification. The two
// cases are deliberately the same to callers: a corrupt entry is a cache miss.
var ErrNotFound = errors.New("artifacts: not found")

// DefaultLockTimeout is how long Open waits for another process to release a
// store when Options.LockTimeout is zero.
const DefaultLockTimeout = 30 * time.Second

// EnvStore is the environment variable DefaultDir consults.
const EnvStore = "FEDPIPE_STORE"

// lockName is the file inside the store directory that Open flocks. It holds
// the holder's pid (informational only: the flock, not the file's contents or
// existence, is the lock). It is never removed: removing a flocked file lets
// two processes each lock a different inode of the same name.
const lockName = "fedpipe.lock"

// Key layout. Every key starts with a one-letter namespace and a slash.
const (
	prefixBlob   = "b/" // b/<32-byte digest> → blob record (see blob.go)
	prefixChunk  = "c/" // c/<32-byte digest> → chunk bytes
	prefixAction = "a/" // a/<32-byte key>    → action record (JSON)
	prefixRef    = "r/" // r/<name>           → 32-byte digest
	keyFormat    = "m/format"
	formatValue  = "fedpipe-store 1"
)

// Options configures Open. The zero value is ready to use.
type Options struct {
	// LockTimeout is how long Open waits for another process to close the
	// store. Zero means DefaultLockTimeout; a negative value means do not
	// wait at all.
	LockTimeout time.Duration

	// Logf, if non-nil, receives human-readable notices: waiting for the
	// lock, corrupt or missing entries found (and treated as misses), and
	// Badger's own warnings and errors. Badger's info and debug output is
	// dropped. Logf must be safe for concurrent use.
	Logf func(format string, args ...any)

	// CloseTimeout bounds how long Close waits for Badger to flush and close. Zero means
	// DefaultCloseTimeout. Badger retries a failed flush forever (a store whose directory
	// was removed under it, a lost disk); the bound lets the process end anyway.
	CloseTimeout time.Duration

	// NoCompactions opens the store with Badger's compactors off: the memtables are still
	// written to level 0, but no table is ever merged. Read-only commands, fsck and salvage
	// open stores this way, so a block damaged after the open's checks never reaches a
	// compaction, which runs on Badger's own goroutines where a panic ends the process.
	NoCompactions bool

	// readOnlyBadger opens Badger in read-only mode: a reader's snapshot (reader.go), whose
	// value logs are links to the store's own files.
	readOnlyBadger bool
}

// DefaultCloseTimeout is Close's bound when Options.CloseTimeout is zero: well inside the
// 30 s a batch system (SLURM's default KillWait) gives a stopped job before SIGKILL.
const DefaultCloseTimeout = 20 * time.Second

// A Store is an open content store and action cache. Close it when done; it
// holds the directory's lock until then.
type Store struct {
	dir  string
	db   *badger.DB
	lock *os.File
	logf func(format string, args ...any)
	// snapshot is the private copy OpenReader opened instead of dir ("" if none); Close
	// removes it.
	snapshot string
	// snapLock is the snapshot folder's reader lock (snapshots.go), held until Close.
	snapLock *os.File
	// mapped counts the bytes moved since the mapped pages were last released (mapped.go).
	mapped mappedBytes
	// readOnly is set for a snapshot opened with Badger read-only: writes fail.
	readOnly bool
	// closeTimeout is Options.CloseTimeout, defaulted.
	closeTimeout time.Duration
}

// Open opens the store in dir, creating the directory and an empty store if
// needed.
//
// If another process has the store open, Open logs one message naming the
// directory and that process's pid, then polls until the store is released
// or opt.LockTimeout passes, in which case it returns an error naming both.
// A process that dies, however it dies, releases the store at once.
func Open(dir string, opt Options) (*Store, error) {
	logf := opt.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if free, ok := freeBytes(existingAncestor(dir)); ok && free < minOpenBytes {
		return nil, fmt.Errorf("%w: the filesystem of store %s has %.1f MiB free; opening a store needs %d MiB (free space or choose another --store)",
			ErrNoSpace, dir, float64(free)/(1<<20), minOpenBytes>>20)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("artifacts: create store directory: %w", err)
	}
	// Badger would block opening a named pipe for reading, or fail on a directory.
	if st, err := os.Stat(filepath.Join(dir, badger.ManifestFilename)); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: store %s: its MANIFEST is not a regular file (%v); `fedpipe fsck --salvage` cannot rebuild a store without its manifest: restore it from a backup",
			ErrDamaged, dir, st.Mode().Type())
	}
	lock, err := acquire(dir, opt.LockTimeout, logf)
	if err != nil {
		return nil, err
	}
	removeEmptyValueLogs(dir, logf)
	if !strings.HasPrefix(filepath.Base(filepath.Clean(dir)), snapshotPrefix) && !strings.HasPrefix(filepath.Base(filepath.Clean(dir)), tmpSnapshotPrefix) {
		removeDeadSnapshots(dir, logf) // the holder clears what dead readers left beside it
	}
	// A reclaim marker left by a gc that died would keep readers from snapshotting this
	// holder's store (maint.go): no reclaim runs before we start one.
	_ = os.Remove(filepath.Join(dir, reclaimMarker))
	bopt := badgerOptions(dir, logf)
	if opt.NoCompactions {
		bopt = withoutCompactions(bopt)
	}
	if opt.readOnlyBadger {
		bopt = bopt.WithReadOnly(true)
	}
	if bad := checkTables(dir, bopt); len(bad) > 0 {
		unlock(lock)
		lock.Close()
		return nil, tablesDamagedError(dir, bad)
	}
	// Badger cuts its newest value log at the first entry that fails its CRC: only a torn
	// tail may go, never intact entries after damage.
	var damage *valueLogDamage
	if !opt.readOnlyBadger { // read-only, Badger truncates nothing
		damage, err = checkNewestValueLog(dir)
	}
	if err == nil && damage != nil {
		err = valueLogDamagedError(dir, damage)
	}
	if err != nil {
		unlock(lock)
		lock.Close()
		return nil, err
	}
	db, err := openBadger(dir, bopt)
	if err != nil {
		unlock(lock)
		lock.Close()
		return nil, err
	}
	s := &Store{dir: dir, db: db, lock: lock, logf: logf, closeTimeout: opt.CloseTimeout, readOnly: opt.readOnlyBadger}
	if err := s.checkFormat(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openBadger opens Badger's database in dir. A panic of Badger's on this goroutine
// (a file it cannot decode) is recovered as an error wrapping ErrDamaged, and so is its
// refusal of a table it cannot open or that the manifest lists but is missing: each
// names the file.
func openBadger(dir string, bopt badger.Options) (db *badger.DB, err error) {
	defer func() {
		if p := recover(); p != nil {
			db = nil
			err = fmt.Errorf("%w: store %s: Badger cannot open it (%s); `fedpipe fsck --salvage` copies every readable entry into a fresh store",
				ErrDamaged, dir, firstLine(fmt.Sprint(p)))
		}
	}()
	db, err = badger.Open(bopt)
	if err == nil {
		return db, nil
	}
	if m := missingTable.FindStringSubmatch(err.Error()); m != nil {
		return nil, fmt.Errorf("%w: store %s: table %s is missing (the manifest lists it); `fedpipe fsck --salvage` copies every readable entry into a fresh store",
			ErrDamaged, dir, filepath.Join(dir, fmt.Sprintf("%06s.sst", m[1])))
	}
	if m := openingTable.FindStringSubmatch(err.Error()); m != nil {
		return nil, fmt.Errorf("%w: store %s: table %s is damaged (%v); `fedpipe fsck --salvage` copies every readable entry into a fresh store",
			ErrDamaged, dir, m[1], err)
	}
	return nil, fmt.Errorf("artifacts: open store %s: %w", dir, err)
}

// missingTable and openingTable find the table in Badger's refusals to open a store.
var (
	missingTable = regexp.MustCompile(`file does not exist for table (\d+)`)
	openingTable = regexp.MustCompile(`Opening table: "([^"]+\.sst)"`)
)

// firstLine returns s up to its first line break.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// removeEmptyValueLogs deletes value-log and memtable files of length zero in dir. Badger
// refuses to open a store holding one ("Open existing file …vlog: Create a new file",
// "while opening fid: 1 err: Create a new file" for a .mem). Stores were left with an empty
// value log by OpenReader's snapshots, which hard-linked value logs: a snapshot's Badger
// deletes a value log holding only its header by truncating it, emptying the holder's file
// too (reader.go now copies small value logs). An empty memtable file is what a process
// killed between Badger creating a memtable's log and sizing it leaves
// (TestKillAnywhereThenResumeIsBitIdentical met one). A file of length zero has not even its
// header, so it holds no value and no write: removing it loses nothing. The caller holds the
// store's lock.
func removeEmptyValueLogs(dir string, logf func(string, ...any)) {
	for _, pattern := range []string{"*.vlog", "*.mem"} {
		logs, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, p := range logs {
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
				if os.Remove(p) == nil {
					logf("removed the empty Badger log file %s (it held nothing; Badger cannot open a store with one)", filepath.Base(p))
				}
			}
		}
	}
}

// MinFreeBytes is the free space a store's filesystem must keep beyond what a write
// needs. Badger maps its value-log files (64 MiB each) into memory; a write into a mapped
// page the filesystem cannot back kills the process with SIGBUS rather than returning an
// error, so the store refuses writes that could run the disk dry.
const MinFreeBytes = 80 << 20

// minOpenBytes is the free space Open needs: Badger maps fresh memtable files on open.
const minOpenBytes = 32 << 20

// ErrReadOnly is returned (wrapped) by a write to a store OpenReader opened through a
// snapshot: a read-only command writes nothing.
var ErrReadOnly = errors.New("artifacts: the store is open for reading only")

// ErrNoSpace is returned (wrapped) when the store's filesystem is too full to write safely.
var ErrNoSpace = errors.New("artifacts: not enough free disk space")

// checkSpace fails if writing n more bytes would leave less than MinFreeBytes free.
func checkSpace(dir string, n int) error {
	free, ok := freeBytes(dir)
	if !ok || free-int64(n) >= MinFreeBytes {
		return nil
	}
	return fmt.Errorf("%w: the filesystem of store %s has %.1f MiB free; fedpipe keeps at least %d MiB free beyond each write (free space, run fedpipe gc, or choose another --store)",
		ErrNoSpace, dir, float64(free)/(1<<20), MinFreeBytes>>20)
}

// existingAncestor returns dir or its nearest ancestor that exists.
func existingAncestor(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

// badgerOptions are tuned for a local, single-user store of mostly large,
// write-once values:
//
//   - Values over 4 KiB (chunks, inline blobs) live in the value log, so the
//     LSM tree holds only keys, pointers and small records and compaction
//     never rewrites blob bytes.
//   - Small memtables (8 MiB, three of them) and value-log files (64 MiB)
//     keep the resident footprint to tens of MiB.
//   - No compression: chunks are float32 weights that barely compress, and
//     Badger compresses only LSM blocks anyway; with compression off no
//     block cache is needed.
//   - No fsync per write: every read is verified against its digest, so a
//     torn write after a power loss reads as a miss, never as wrong data
//     (the Go build cache makes the same trade). A killed process loses
//     nothing that Badger acknowledged: its writes are in the page cache.
func badgerOptions(dir string, logf func(string, ...any)) badger.Options {
	// WithLoggingLevel installs Badger's own stderr logger, so the logger comes after it.
	return badger.DefaultOptions(dir).
		WithLoggingLevel(badger.WARNING).
		WithLogger(badgerLogger{logf}).
		WithMetricsEnabled(false).
		WithSyncWrites(false).
		WithCompression(options.None).
		WithBlockCacheSize(0).
		WithIndexCacheSize(0).
		WithMemTableSize(8 << 20).
		WithNumMemtables(3).
		WithNumLevelZeroTables(4).
		WithNumLevelZeroTablesStall(10).
		WithValueThreshold(4 << 10).
		WithValueLogFileSize(64 << 20).
		WithNumCompactors(2).
		WithNumGoroutines(2)
}

// withoutCompactions turns Badger's compactors off in bopt. Level 0 then only grows, so
// writes must not stall on its table count (no compactor would ever lower it).
func withoutCompactions(bopt badger.Options) badger.Options {
	return bopt.WithNumCompactors(0).WithNumLevelZeroTables(1 << 20).WithNumLevelZeroTablesStall(1<<20 + 1)
}

// acquire opens dir's lock file and takes its lock, waiting as Open describes.
func acquire(dir string, timeout time.Duration, logf func(string, ...any)) (*os.File, error) {
	if timeout == 0 {
		timeout = DefaultLockTimeout
	}
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("artifacts: open lock file: %w", err)
	}
	deadline := time.Now().Add(timeout)
	warned := false
	for {
		held, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("artifacts: lock store %s: %w", dir, err)
		}
		if !held {
			break
		}
		if !warned {
			warned = true
			if timeout > 0 {
				logf("store %s is in use: waiting for %s — up to %s", dir, holder(path), fmtWait(timeout))
			}
		}
		if timeout < 0 || time.Now().After(deadline) {
			f.Close()
			wait := "did not wait (LockTimeout < 0)"
			if timeout > 0 {
				wait = fmt.Sprintf("gave up after %v", timeout)
			}
			return nil, lockedError(fmt.Sprintf("artifacts: store %s is in use by another fedpipe process, %s; %s: wait for it to finish, or use a different store directory", dir, holder(path), wait))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// We hold the lock: record our pid for the benefit of waiters.
	if err := f.Truncate(0); err == nil {
		f.WriteAt(lockRecord(), 0)
	}
	return f, nil
}

// holder describes the process named in the lock file at path.
func holder(path string) string { return readHolder(path).describe() }

// checkFormat records the store format in a new store and refuses a store
// written in a different format.
func (s *Store) checkFormat() error {
	run := s.update
	if s.readOnly {
		run = s.view // a snapshot of a store: the format is there, or it is refused
	}
	return run(func(txn *badger.Txn) error {
		item, err := txn.Get([]byte(keyFormat))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return txn.Set([]byte(keyFormat), []byte(formatValue))
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if !bytes.Equal(v, []byte(formatValue)) {
				return fmt.Errorf("artifacts: store %s has format %q, this fedpipe reads %q: use a different store directory", s.dir, v, formatValue)
			}
			return nil
		})
	})
}

// Dir returns the directory the store was opened from.
func (s *Store) Dir() string { return s.dir }

// Close flushes and closes the database and releases the directory lock. No
// other method may be called during or after Close.
func (s *Store) Close() error {
	err := s.closeDB()
	if s.lock != nil {
		unlock(s.lock)
		s.lock.Close()
		s.lock = nil
	}
	if s.snapshot != "" {
		releaseSnapshot(s.snapshot, s.snapLock)
		s.snapshot, s.snapLock = "", nil
	}
	if err != nil {
		return fmt.Errorf("artifacts: close store %s: %w", s.dir, err)
	}
	return nil
}

// closeFlushBytes is the free space closeDB needs to let Badger close: Close writes each
// memtable (8 MiB, up to three) into a table through a memory-mapped file, and a write
// into a page the filesystem cannot back kills the process (SIGBUS, "unexpected fault
// address") instead of returning an error.
const closeFlushBytes = 40 << 20

// closeDB closes Badger, giving up after the close timeout: what was committed before is
// in Badger's log, which the next Open replays. On a filesystem with less than
// closeFlushBytes free (a disk that another process filled while the store was open) it
// leaves Badger open and unflushed rather than crash: the process is about to end, which
// releases Badger's files, and the next Open replays the log as after a kill -9.
func (s *Store) closeDB() error {
	if free, ok := freeBytes(s.dir); ok && free < closeFlushBytes {
		return fmt.Errorf("%w: the filesystem of store %s has %.1f MiB free, too little for Badger to write its tables on close; "+
			"they stay in its log, which the next run replays once space is freed", ErrNoSpace, s.dir, float64(free)/(1<<20))
	}
	timeout := s.closeTimeout
	if timeout <= 0 {
		timeout = DefaultCloseTimeout
	}
	done := make(chan error, 1)
	go func() { done <- s.db.Close() }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("gave up after %v: Badger could not finish writing its tables (was the store's directory removed, or its disk lost?); "+
			"what was written before is in its log, which the next run replays", timeout)
	}
}

// update runs fn in a read-write transaction, retrying when Badger reports a
// conflict with a concurrent transaction.
func (s *Store) update(fn func(txn *badger.Txn) error) (err error) {
	if s.readOnly {
		return fmt.Errorf("%w: store %s is read through a snapshot", ErrReadOnly, s.dir)
	}
	defer func() {
		if p := recover(); p != nil {
			err = s.damagedError(p)
		}
	}()
	for range 10 {
		err = s.db.Update(fn)
		if !errors.Is(err, badger.ErrConflict) {
			return err
		}
	}
	return err
}

// badgerLogger sends Badger's warnings and errors to Logf and drops the rest.
type badgerLogger struct{ logf func(string, ...any) }

func (l badgerLogger) Errorf(f string, a ...any) {
	l.logf("badger error: "+strings.TrimRight(f, "\n"), a...)
}
func (l badgerLogger) Warningf(f string, a ...any) {
	msg := fmt.Sprintf(strings.TrimRight(f, "\n"), a...)
	// A compaction that finds too few tables to fill (Flatten in reclaim, maint.go)
	// has nothing to do; Badger itself treats this as no error when it closes.
	if strings.Contains(msg, "Unable to fill tables") {
		return
	}
	l.logf("badger warning: %s", msg)
}
func (badgerLogger) Infof(string, ...any)  {}
func (badgerLogger) Debugf(string, ...any) {}
