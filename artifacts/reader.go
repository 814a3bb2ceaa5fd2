package artifacts

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// OpenReader opens the store in dir for reading without waiting for a process that holds
// it. If the store is free it is opened as Open does. If another process holds it (a
// `fedpipe run`), OpenReader reads a snapshot instead: its memtables, manifest, tables
// (small: values over 4 KiB live in the value logs) and newest value log are copied, and
// its older value logs hard-linked (copied where links are impossible, or when small),
// into a private directory, which is opened as a store and removed by Close. The holder's
// files are never written: Badger truncates a file it deletes, and a hard link would share
// that (snapshot's compaction once emptied a running holder's tables; see
// TestSnapshotNeverWritesTheHoldersFiles). Every read is still verified against its digest, so whatever the holder was
// writing at the instant of the copy reads as a miss, never as wrong data.
//
// Anything written to a snapshot is discarded on Close.
func OpenReader(dir string, opt Options) (*Store, error) {
	logf := opt.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err != nil {
		return Open(dir, opt) // no store yet, or not a store: Open says which
	}
	if ReadOnly(dir) {
		return openReadOnly(dir, logf)
	}
	opt.NoCompactions = true // a reader merges no table: a damaged block never meets a compaction
	o := opt
	o.LockTimeout = -1
	s, err := Open(dir, o)
	if err == nil || !errors.Is(err, ErrLocked) {
		return s, err
	}
	removeDeadSnapshots(dir, logf)
	var last error
	for range 5 { // a compaction between two copies can make one inconsistent: retry
		if reclaiming(dir) {
			return Open(dir, opt)
		}
		snap, snapLock, err := snapshot(dir)
		if err != nil {
			return nil, fmt.Errorf("artifacts: snapshot of store %s (in use by %s): %w", dir, holder(filepath.Join(dir, lockName)), err)
		}
		if reclaiming(dir) { // the holder began after our links were made: drop them
			releaseSnapshot(snap, snapLock)
			return Open(dir, opt)
		}
		s, err := Open(snap, Options{LockTimeout: -1, Logf: logf, NoCompactions: true, readOnlyBadger: true})
		if err == nil {
			logf("store %s is in use by %s: reading a snapshot of it", dir, holder(filepath.Join(dir, lockName)))
			s.snapshot, s.snapLock, s.dir = snap, snapLock, dir
			return s, nil
		}
		releaseSnapshot(snap, snapLock)
		last = err
	}
	return nil, fmt.Errorf("artifacts: store %s is in use by %s and no consistent snapshot of it could be read: %w", dir, holder(filepath.Join(dir, lockName)), last)
}

// openReadOnly reads the store in dir, which this process cannot write (a read-only mount,
// a shared folder of another user), through a snapshot in the temporary directory: its
// lock is neither written nor taken, and nothing in dir is written. A run of the store's
// owner may hold it meanwhile: the snapshot is made as beside a holder, and retried when a
// compaction made one inconsistent or a gc is rewriting the value log.
func openReadOnly(dir string, logf func(string, ...any)) (*Store, error) {
	removeDeadSnapshots(dir, logf)
	var last error
	for range 5 {
		if reclaiming(dir) {
			time.Sleep(time.Second)
			last = fmt.Errorf("a gc of its owner is rewriting its value log")
			continue
		}
		snap, snapLock, err := snapshot(dir)
		if err != nil {
			return nil, fmt.Errorf("artifacts: copy of read-only store %s: %w", dir, err)
		}
		s, err := Open(snap, Options{LockTimeout: -1, Logf: logf, NoCompactions: true, readOnlyBadger: true})
		if err == nil {
			logf("store %s is read-only here: reading a copy of it in %s", dir, snap)
			s.snapshot, s.snapLock, s.dir = snap, snapLock, dir
			return s, nil
		}
		releaseSnapshot(snap, snapLock)
		last = err
	}
	return nil, fmt.Errorf("artifacts: store %s is read-only here and no consistent copy of it could be read: %w", dir, last)
}

// reclaiming reports whether dir's holder is rewriting its value log (reclaim, maint.go),
// whose files a snapshot must not share: the reader then waits for the lock instead, as
// Open does. The holder puts its marker up before it looks for snapshots' links, and a
// reader looks for the marker after making them, so one of the two always sees the other.
func reclaiming(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, reclaimMarker))
	return err == nil
}

// snapshot copies dir's Badger files into a new directory beside it (or in the system's
// temporary directory) and returns that directory with its reader lock (snapshots.go),
// taken before anything is copied.
//
// The snapshot is opened with Badger in read-only mode (readOnlyBadger), which writes
// none of its files: its value logs are symbolic links to the store's own, never copied,
// and its memtable logs are copied only up to their replayable end. Only the manifest,
// the tables (keys and pointers: small) and that much of the memtables are copied.
func snapshot(dir string) (string, *os.File, error) {
	snap, lock, err := newSnapshotDir(filepath.Dir(filepath.Clean(dir)), snapshotPrefix)
	if err != nil {
		if snap, lock, err = newSnapshotDir(os.TempDir(), tmpSnapshotPrefix); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				err = fmt.Errorf("%w: a snapshot in %s: %w", ErrNoSpace, os.TempDir(), err)
			}
			return "", nil, err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		releaseSnapshot(snap, lock)
		return "", nil, err
	}
	var mems, vlogs, ssts, others []string
	for _, e := range entries {
		n := e.Name()
		switch {
		case !e.Type().IsRegular() || n == lockName || n == "LOCK" || n == reclaimMarker || n == readerLockName:
		case strings.HasSuffix(n, ".mem"):
			mems = append(mems, n)
		case strings.HasSuffix(n, ".vlog"):
			vlogs = append(vlogs, n)
		case strings.HasSuffix(n, ".sst"):
			ssts = append(ssts, n)
		default:
			others = append(others, n)
		}
	}
	sort.Strings(vlogs)
	// Badger writes the value log before the memtable that points into it: memtables
	// first, then value logs, so every pointer copied has its value.
	var steps []func() error
	abs, err := filepath.Abs(dir)
	if err != nil {
		releaseSnapshot(snap, lock)
		return "", nil, err
	}
	for _, n := range mems {
		steps = append(steps, func() error { return copyWAL(filepath.Join(dir, n), filepath.Join(snap, n)) })
	}
	// The snapshot's Badger only reads: the value logs are linked by name, whatever their
	// size, across filesystems too.
	for _, n := range vlogs {
		steps = append(steps, func() error { return os.Symlink(filepath.Join(abs, n), filepath.Join(snap, n)) })
	}
	for _, n := range others {
		if n == "DISCARD" {
			continue // the value-log GC's statistics: a read-only Badger reads none
		}
		steps = append(steps, func() error { return copyFile(filepath.Join(dir, n), filepath.Join(snap, n)) })
	}
	for _, n := range ssts {
		steps = append(steps, func() error { return copyFile(filepath.Join(dir, n), filepath.Join(snap, n)) })
	}
	for _, step := range steps {
		if snapshotStep != nil {
			snapshotStep()
		}
		if err := step(); err != nil && !errors.Is(err, os.ErrNotExist) {
			releaseSnapshot(snap, lock)
			if errors.Is(err, syscall.ENOSPC) {
				// A full temporary directory is not damage: no salvage can help.
				err = fmt.Errorf("%w: the snapshot in %s: %w", ErrNoSpace, filepath.Dir(snap), err)
			}
			return "", nil, err
		}
	}
	return snap, lock, nil
}

// snapshotStep, when set (by tests only), runs before each file a snapshot copies.
var snapshotStep func()

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// ErrLocked matches (errors.Is) the error Open returns when another process holds the
// store and the lock timeout passed.
var ErrLocked = errors.New("artifacts: store in use")

// lockedError is Open's message when the store is held; it matches ErrLocked.
type lockedError string

func (e lockedError) Error() string        { return string(e) }
func (e lockedError) Is(target error) bool { return target == ErrLocked }

// holderInfo is what the lock file records of its holder, for the messages of waiters.
type holderInfo struct {
	pid     int
	command string
	since   time.Time
}

// lockRecord is what a holder writes into the lock file: its pid, its command line and
// when it took the lock.
func lockRecord() []byte {
	args := append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...)
	return []byte(strconv.Itoa(os.Getpid()) + "\n" + strings.Join(args, " ") + "\n" + time.Now().Format(time.RFC3339) + "\n")
}

func readHolder(path string) holderInfo {
	b, err := os.ReadFile(path)
	if err != nil {
		return holderInfo{}
	}
	lines := strings.Split(string(b), "\n")
	var h holderInfo
	h.pid, _ = strconv.Atoi(strings.TrimSpace(lines[0]))
	if len(lines) > 1 {
		h.command = strings.Map(func(r rune) rune {
			if r < ' ' || r == 0x7f {
				return '?'
			}
			return r
		}, strings.TrimSpace(lines[1]))
	}
	if len(lines) > 2 {
		h.since, _ = time.Parse(time.RFC3339, strings.TrimSpace(lines[2]))
	}
	return h
}

// describe renders a holder as "pid 123 (running `fedpipe run m.yaml`, since 14:05)".
func (h holderInfo) describe() string {
	if h.pid <= 0 {
		return "pid unknown"
	}
	s := "pid " + strconv.Itoa(h.pid)
	var extra []string
	if h.command != "" {
		extra = append(extra, "running `"+h.command+"`")
	}
	if !h.since.IsZero() {
		extra = append(extra, "since "+h.since.Local().Format("15:04"))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

// fmtWait renders a wait as "30 s" or "2 min".
func fmtWait(d time.Duration) string {
	if d >= 2*time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}
