//go:build unix

package artifacts

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The snapshot folder of a reader that died without closing (its locks released, as the
// kernel releases a killed process's) is removed by the next reader and by the next
// holder, at once, whatever its age: one whose reader was killed while copying (its
// reader lock free), an empty one (killed before it locked). A live reader's folder, and
// one still being copied (its reader lock held), are left alone; so is a young folder of
// an older fedpipe (files, no reader lock), until it is an hour old.
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
	// A reader that dies: its snapshot's locks are released, nothing else is.
	die := func(s *Store) string {
		unlock(s.lock)
		s.lock.Close()
		s.lock = nil
		unlock(s.snapLock)
		s.snapLock.Close()
		s.snapLock = nil
		return s.snapshot
	}
	dead, err := OpenReader(dir, Options{})
	if err != nil || dead.snapshot == "" {
		t.Fatalf("reader beside a holder: %v (snapshot %q)", err, dead.snapshot)
	}
	deadSnap := die(dead)
	defer dead.db.Close()
	mk := func(name string, files ...string) string {
		d := filepath.Join(parent, snapshotPrefix+name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(d, f), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	copying := mk("copying", readerLockName, "000001.vlog")
	lf, err := os.Open(filepath.Join(copying, readerLockName))
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	if held, err := tryLock(lf); held || err != nil {
		t.Fatalf("lock the copying reader's folder: %v %v", held, err)
	}
	killedCopying := mk("killed", readerLockName, "000001.vlog")
	empty := mk("empty")
	legacyYoung := mk("legacy-young", "000001.vlog")
	legacyOld := mk("legacy-old", "000001.vlog")
	old := time.Now().Add(-2 * unlockedSnapshotAge)
	for _, p := range []string{filepath.Join(legacyOld, "000001.vlog"), legacyOld} { // nothing in it changed since
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	var logs []string
	logf := func(format string, a ...any) { logs = append(logs, format) }
	live, err := OpenReader(dir, Options{Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	for _, c := range []struct {
		path string
		want bool
	}{{deadSnap, false}, {killedCopying, false}, {empty, false}, {legacyOld, false},
		{copying, true}, {legacyYoung, true}, {live.snapshot, true}} {
		if exists(c.path) != c.want {
			t.Errorf("after the next reader: %s exists %v, want %v", filepath.Base(c.path), !c.want, c.want)
		}
	}
	if !strings.Contains(strings.Join(logs, "\n"), "ended without closing") {
		t.Errorf("no notice of the removal: %q", logs)
	}
	// The live reader dies too; the next holder removes its folder.
	liveSnap := die(live)
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

// envReader makes the test binary a reader of the store it names (TestReaderHelperProcess);
// envReaderStall makes it stop, saying "copying", in the middle of copying its snapshot.
const (
	envReader      = "FEDPIPE_ARTIFACTS_READER"
	envReaderStall = "FEDPIPE_ARTIFACTS_READER_STALL"
)

// TestReaderHelperProcess is not a test: it is the body of a reader process that
// TestKilledReadersLeaveNoSnapshots kills.
func TestReaderHelperProcess(t *testing.T) {
	dir := os.Getenv(envReader)
	if dir == "" {
		t.Skip("helper process only")
	}
	if os.Getenv(envReaderStall) != "" {
		n := 0
		snapshotStep = func() {
			if n++; n == 2 {
				fmt.Println("copying")
				select {}
			}
		}
	}
	s, err := OpenReader(dir, Options{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	defer s.Close() // never reached: the reader is killed
	select {}
}

// Issue 61, item 7: readers killed 0.01–0.25 s after they start, some of them in the
// middle of copying their snapshot, leave no snapshot folder behind once the next reader
// has opened the store (and closed it): a dead reader is told by its lock, not by age.
func TestKilledReadersLeaveNoSnapshots(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // no other process's snapshots in sight
	parent := t.TempDir()
	dir := filepath.Join(parent, "store")
	holder, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	for i := range 24 { // 7 MiB in the value log: a copy takes a while
		if _, err := holder.Put(randBytes(uint64(i), 300<<10)); err != nil {
			t.Fatal(err)
		}
	}
	// start starts a reader; stall makes it stop in the middle of copying.
	start := func(stall bool) (*exec.Cmd, io.ReadCloser) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReaderHelperProcess$")
		cmd.Env = append(os.Environ(), envReader+"="+dir)
		if stall {
			cmd.Env = append(cmd.Env, envReaderStall+"=1")
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, out
	}
	snapshots := func() []string {
		var found []string
		for _, place := range []struct{ dir, prefix string }{{parent, snapshotPrefix}, {os.TempDir(), tmpSnapshotPrefix}} {
			entries, _ := os.ReadDir(place.dir)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), place.prefix) {
					found = append(found, filepath.Join(place.dir, e.Name()))
				}
			}
		}
		return found
	}
	// Five readers killed while copying, each at the same point, once all five are there
	// (a reader that starts clears dead readers' folders first).
	var wg sync.WaitGroup
	var stalled []*exec.Cmd
	for range 5 {
		cmd, out := start(true)
		sc := bufio.NewScanner(out)
		if !sc.Scan() || sc.Text() != "copying" {
			t.Fatalf("stalled reader said %q", sc.Text())
		}
		go io.Copy(io.Discard, out)
		stalled = append(stalled, cmd)
	}
	for _, cmd := range stalled {
		cmd.Process.Kill()
		cmd.Wait()
	}
	if n := len(snapshots()); n != 5 {
		t.Fatalf("%d snapshot folders after killing 5 readers while they copied, want 5", n)
	}
	// Five more killed 0.01–0.25 s after they start, wherever they are.
	for i := range 5 {
		cmd, out := start(false)
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(10*time.Millisecond + time.Duration(i)*60*time.Millisecond)
			cmd.Process.Kill()
			io.Copy(io.Discard, out)
			cmd.Wait()
		}()
	}
	wg.Wait()
	next, err := OpenReader(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := next.Close(); err != nil {
		t.Fatal(err)
	}
	if left := snapshots(); len(left) > 0 {
		t.Errorf("%d snapshot folders of killed readers survive the next reader: %v", len(left), left)
	}
}

// A snapshot folder whose reader lock an interrupted cleanup already removed (issue 69: a
// 50 MB one survived status and fsck for an hour) is removed by the next reader or holder
// once nothing in it has changed for a minute; one still being written (an older
// fedpipe's reader copying) is left; a folder its reader was removing (renamed first,
// removingSuffix) goes at once.
func TestLocklessSnapshotFolderIsRemoved(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "store")
	mk := func(name string, age time.Duration) string {
		d := filepath.Join(parent, snapshotPrefix+name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"000001.sst", "MANIFEST", "000001.vlog"} {
			p := filepath.Join(d, f)
			if err := os.WriteFile(p, make([]byte, 1<<20), 0o644); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-age)
			os.Chtimes(p, old, old)
		}
		old := time.Now().Add(-age)
		os.Chtimes(d, old, old)
		return d
	}
	stale := mk("stale", 2*time.Minute)
	fresh := mk("fresh", 0)
	removing := mk("cut"+removingSuffix, 0)
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the lockless folder untouched for 2 minutes is still there: %v", err)
	}
	if _, err := os.Stat(removing); !os.IsNotExist(err) {
		t.Errorf("the folder its reader was removing is still there: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("the folder being written was removed: %v", err)
	}
}
