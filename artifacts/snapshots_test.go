//go:build unix

package artifacts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The snapshot folder of a reader that died without closing (its lock released, as the
// kernel releases a killed process's) is removed by the next reader and by the next
// holder; a live reader's folder, and one still being copied, are left alone; one left
// without a lock file (a reader killed while copying) goes once it is an hour old.
func TestDeadReadersSnapshotsAreRemoved(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "store")
	holder, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Put([]byte("kept")); err != nil {
		t.Fatal(err)
	}
	// A reader that dies: its snapshot's lock is released, nothing else is.
	dead, err := OpenReader(dir, Options{})
	if err != nil || dead.snapshot == "" {
		t.Fatalf("reader beside a holder: %v (snapshot %q)", err, dead.snapshot)
	}
	unlock(dead.lock)
	dead.lock.Close()
	dead.lock = nil
	deadSnap := dead.snapshot
	defer dead.db.Close()
	copying := filepath.Join(parent, snapshotPrefix+"copying")
	abandoned := filepath.Join(parent, snapshotPrefix+"abandoned")
	for _, d := range []string{copying, abandoned} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * unlockedSnapshotAge)
	if err := os.Chtimes(abandoned, old, old); err != nil {
		t.Fatal(err)
	}
	var logs []string
	logf := func(format string, a ...any) { logs = append(logs, format) }
	live, err := OpenReader(dir, Options{Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	if exists(deadSnap) || exists(abandoned) || !exists(copying) || !exists(live.snapshot) {
		t.Errorf("after the next reader: dead %v, abandoned %v, copying %v, live %v; want only the last two",
			exists(deadSnap), exists(abandoned), exists(copying), exists(live.snapshot))
	}
	if !strings.Contains(strings.Join(logs, "\n"), "ended without closing") {
		t.Errorf("no notice of the removal: %q", logs)
	}
	// The live reader dies too; the next holder removes its folder.
	liveSnap := live.snapshot
	unlock(live.lock)
	live.lock.Close()
	live.lock = nil
	defer live.db.Close()
	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	next, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if exists(liveSnap) || !exists(copying) {
		t.Errorf("after the next holder: dead reader's folder %v, copying %v", exists(liveSnap), exists(copying))
	}
}

// DiskBytes counts what the store's files take on disk, as du does, not the apparent
// sizes of the files Badger extends ahead of its writes (gc reported 145 MiB for a store
// du put at 1 MiB).
func TestDiskBytesCountsAllocatedBlocks(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put(make([]byte, 10000)); err != nil {
		t.Fatal(err)
	}
	var apparent int64
	ents, _ := os.ReadDir(s.Dir())
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			apparent += fi.Size()
		}
	}
	if apparent < 64<<20 {
		t.Skipf("Badger's files are %d bytes apparent: nothing sparse to tell apart", apparent)
	}
	if got := s.DiskBytes(); got > 16<<20 {
		t.Errorf("DiskBytes = %d for a store holding 10 kB (apparent sizes %d)", got, apparent)
	}
}
