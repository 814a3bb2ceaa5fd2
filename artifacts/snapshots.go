package artifacts

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Snapshot folders (reader.go) are named snapshotPrefix+random beside the store, or
// tmpSnapshotPrefix+random in the system's temporary directory. The reader that made one
// holds the lock of the store opened in it (its lockName file) until it closes, and the
// kernel drops that lock when the reader dies, however it dies: a folder whose lock can be
// taken belongs to no live reader.
const (
	snapshotPrefix    = ".fedpipe-snapshot-"
	tmpSnapshotPrefix = "fedpipe-snapshot-"
)

// readerLockName is the file in a snapshot folder that its reader creates and flocks as
// soon as it has made the folder, before copying anything, and holds until Close has
// removed the folder: the kernel drops the lock when the reader dies, however it dies, so
// a folder whose reader lock can be taken belongs to no live reader, whatever its age.
const readerLockName = "fedpipe-reader.lock"

// unlockedSnapshotAge is how long nothing in a non-empty snapshot folder without a reader
// lock must have changed for it to count as dead. Such a folder is what a cleanup that was
// interrupted after removing the lock leaves (releaseSnapshot now renames the folder
// first: removingSuffix), or an older fedpipe's reader, which locked a snapshot only once
// it was copied, killed while copying: a live one of those writes its copies, and its
// folder's newest file is seconds old.
const unlockedSnapshotAge = time.Minute

// removingSuffix ends the name of a snapshot folder its reader is removing (releaseSnapshot):
// whatever of it is left belongs to no reader.
const removingSuffix = ".removing"

// removeDeadSnapshots deletes the snapshot folders of readers that died (killed before
// their Close) beside the store in dir and in the temporary directory, and returns how
// many it removed. A folder some live reader holds is left alone. Removing a folder only
// unlinks its hard links: the holder's value logs are untouched.
func removeDeadSnapshots(dir string, logf func(string, ...any)) int {
	removed := 0
	for _, snap := range snapshotFolders(filepath.Clean(dir)) {
		if snap == filepath.Clean(dir) {
			continue
		}
		if removeIfDead(snap) {
			removed++
			logf("removed %s, the snapshot of a reader that ended without closing it", snap)
		}
	}
	return removed
}

// snapshotFolders lists the readers' snapshot folders of the store in dir: those beside it
// and those in the temporary directory.
func snapshotFolders(dir string) []string {
	var snaps []string
	for _, place := range []struct{ dir, prefix string }{
		{filepath.Dir(dir), snapshotPrefix}, {os.TempDir(), tmpSnapshotPrefix}} {
		entries, err := os.ReadDir(place.dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), place.prefix) {
				snaps = append(snaps, filepath.Join(place.dir, e.Name()))
			}
		}
	}
	return snaps
}

// removeIfDead removes the snapshot folder snap unless a live reader holds it, and reports
// whether it did. It holds the folder's reader lock while it removes it, so a reader that
// created the lock file but had not locked it yet finds its folder gone once it has the
// lock, and starts again (newSnapshotDir). An empty folder without a lock file is a
// reader's that died, or one about to create its lock file, which then fails and starts
// again: either way it goes.
func removeIfDead(snap string) bool {
	if strings.HasSuffix(snap, removingSuffix) {
		return os.RemoveAll(snap) == nil
	}
	if !canLock {
		return false
	}
	f, err := os.Open(filepath.Join(snap, readerLockName))
	if err != nil {
		if !os.IsNotExist(err) {
			return false
		}
		if os.Remove(snap) == nil { // empty
			return true
		}
		return legacyDead(snap) && os.RemoveAll(snap) == nil
	}
	defer f.Close()
	held, err := tryLock(f)
	if err != nil || held {
		return false
	}
	defer unlock(f)
	return os.RemoveAll(snap) == nil
}

// legacyDead judges a snapshot folder without a reader lock, as an older fedpipe left
// them: dead when the lock of the store opened in it can be taken, or when it has none and
// is older than unlockedSnapshotAge.
func legacyDead(snap string) bool {
	f, err := os.OpenFile(filepath.Join(snap, lockName), os.O_RDWR, 0)
	if err != nil {
		newest, ok := newestChange(snap)
		return os.IsNotExist(err) && ok && time.Since(newest) > unlockedSnapshotAge
	}
	defer f.Close()
	held, err := tryLock(f)
	if err != nil || held {
		return false
	}
	unlock(f)
	return true
}

// newestChange returns the latest modification time of the folder dir and the files in it.
func newestChange(dir string) (time.Time, bool) {
	st, err := os.Stat(dir)
	if err != nil {
		return time.Time{}, false
	}
	newest := st.ModTime()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
	}
	return newest, true
}

// newSnapshotDir makes an empty snapshot folder in parent, named prefix+random, and
// returns it with its reader lock taken (see readerLockName). A remover that judged the
// fresh folder dead before the lock was taken removed it; the reader then makes another.
func newSnapshotDir(parent, prefix string) (string, *os.File, error) {
	var err error
	for range 10 {
		var snap string
		if snap, err = os.MkdirTemp(parent, prefix); err != nil {
			return "", nil, err
		}
		path := filepath.Join(snap, readerLockName)
		var f *os.File
		if f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666); err != nil {
			if os.IsNotExist(err) {
				continue // removed while empty
			}
			os.RemoveAll(snap)
			return "", nil, err
		}
		if err = lockWait(f); err != nil {
			f.Close()
			os.RemoveAll(snap)
			return "", nil, err
		}
		mine, _ := f.Stat()
		if now, serr := os.Stat(path); serr == nil && os.SameFile(mine, now) {
			return snap, f, nil
		}
		unlock(f) // removed before we had the lock
		f.Close()
		err = fmt.Errorf("snapshot folder %s was removed while being made", snap)
	}
	return "", nil, err
}

// releaseSnapshot removes the snapshot folder snap, then releases its reader lock.
func releaseSnapshot(snap string, lock *os.File) {
	// Renamed first, under the lock: a removal cut short (the lock file gone, the rest not)
	// leaves a folder that the next reader or run knows to be dead by its name.
	if os.Rename(snap, snap+removingSuffix) == nil {
		snap += removingSuffix
	}
	os.RemoveAll(snap)
	if lock != nil {
		unlock(lock)
		lock.Close()
	}
}

// symlinkedValueLogs returns the names of dir's value-log files that the snapshot folder
// of a live reader (its reader lock held) links to, beside the store and in the temporary
// directory. A folder this process cannot read (another user's) is not seen.
func symlinkedValueLogs(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, snap := range snapshotFolders(abs) {
		var linked []string
		logs, _ := filepath.Glob(filepath.Join(snap, "*.vlog"))
		for _, l := range logs {
			if to, err := os.Readlink(l); err == nil && filepath.Dir(to) == abs {
				linked = append(linked, filepath.Base(to))
			}
		}
		if len(linked) > 0 && snapshotLive(snap) {
			names = append(names, linked...)
		}
	}
	return names
}

// snapshotLive reports whether a reader holds the snapshot folder snap's reader lock.
func snapshotLive(snap string) bool {
	if !canLock {
		return true
	}
	f, err := os.Open(filepath.Join(snap, readerLockName))
	if err != nil {
		return false
	}
	defer f.Close()
	held, err := tryLock(f)
	if err != nil {
		return true
	}
	if !held {
		unlock(f)
	}
	return held
}
