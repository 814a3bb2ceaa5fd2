package artifacts

import (
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

// unlockedSnapshotAge is how old a snapshot folder without a lock file must be to count as
// dead: one is being copied before its store is opened, and a reader killed while copying
// leaves one; copies take seconds.
const unlockedSnapshotAge = time.Hour

// removeDeadSnapshots deletes the snapshot folders of readers that died (killed before
// their Close) beside the store in dir and in the temporary directory, and returns how
// many it removed. A folder some live reader holds is left alone. Removing a folder only
// unlinks its hard links: the holder's value logs are untouched.
func removeDeadSnapshots(dir string, logf func(string, ...any)) int {
	removed := 0
	for _, place := range []struct{ dir, prefix string }{
		{filepath.Dir(filepath.Clean(dir)), snapshotPrefix}, {os.TempDir(), tmpSnapshotPrefix}} {
		entries, err := os.ReadDir(place.dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), place.prefix) {
				continue
			}
			snap := filepath.Join(place.dir, e.Name())
			if snap == filepath.Clean(dir) || !deadSnapshot(snap) {
				continue
			}
			if os.RemoveAll(snap) == nil {
				removed++
				logf("removed %s, the snapshot of a reader that ended without closing it", snap)
			}
		}
	}
	return removed
}

// deadSnapshot reports whether no live reader holds the snapshot folder snap: its lock can
// be taken (it is released again at once), or it has no lock file and is older than
// unlockedSnapshotAge.
func deadSnapshot(snap string) bool {
	if !canLock {
		return false
	}
	f, err := os.OpenFile(filepath.Join(snap, lockName), os.O_RDWR, 0)
	if err != nil {
		st, serr := os.Stat(snap)
		return os.IsNotExist(err) && serr == nil && time.Since(st.ModTime()) > unlockedSnapshotAge
	}
	defer f.Close()
	held, err := tryLock(f)
	if err != nil || held {
		return false
	}
	unlock(f)
	return true
}
