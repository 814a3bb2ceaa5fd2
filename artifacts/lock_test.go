package artifacts

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The lock tests re-execute the test binary as a second process that opens a
// store; envHelper selects what it does there.
const (
	envHelper = "FEDPIPE_ARTIFACTS_HELPER"
	envDir    = "FEDPIPE_ARTIFACTS_HELPER_DIR"
)

// TestHelperProcess is not a test: it is the body of the child process.
//
//	hold:  open the store, print "ready", keep it open until stdin closes.
//	write: open the store, then Put blobs forever, printing each digest once
//	       Put has returned.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(envHelper)
	if mode == "" {
		t.Skip("helper process only")
	}
	s, err := Open(os.Getenv(envDir), Options{LockTimeout: -1})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	switch mode {
	case "hold":
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
	case "write":
		for i := uint64(0); ; i++ {
			d, err := s.Put(randBytes(1000+i, 300<<10))
			if err != nil {
				fmt.Println("put:", err)
				os.Exit(1)
			}
			fmt.Println(d)
		}
	}
	s.Close()
	os.Exit(0)
}

type helper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
}

func startHelper(t *testing.T, mode, dir string) *helper {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("flock-based locking is unix-only")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), envHelper+"="+mode, envDir+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return h
}

func (h *helper) line(t *testing.T) string {
	t.Helper()
	if !h.out.Scan() {
		t.Fatalf("helper exited early: %v", h.out.Err())
	}
	return h.out.Text()
}

func TestLockContention(t *testing.T) {
	dir := t.TempDir()
	h := startHelper(t, "hold", dir)
	if got := h.line(t); got != "ready" {
		t.Fatalf("helper said %q", got)
	}
	pid := "pid " + strconv.Itoa(h.cmd.Process.Pid)

	// Times out, naming the directory and the holder's pid, after logging
	// exactly one waiting message.
	lb := &logBuf{}
	start := time.Now()
	_, err := Open(dir, Options{LockTimeout: 300 * time.Millisecond, Logf: lb.logf})
	if err == nil {
		t.Fatal("Open succeeded while another process held the store")
	}
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Fatalf("Open gave up after %v, before LockTimeout", el)
	}
	for _, want := range []string{dir, pid, "in use"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The message says who holds the store, running what, since when, and for how long
	// this process waits.
	wantMsg := fmt.Sprintf("waiting for %s (running `%s -test.run=^TestHelperProcess$`, since %s) — up to 0.3 s",
		pid, filepath.Base(os.Args[0]), time.Now().Format("15:04"))
	if len(lb.lines) != 1 || !strings.Contains(lb.lines[0], wantMsg) {
		t.Fatalf("want one waiting message %q, got %q", wantMsg, lb.lines)
	}

	// LockTimeout < 0: fail at once.
	start = time.Now()
	if _, err := Open(dir, Options{LockTimeout: -1}); err == nil || time.Since(start) > 200*time.Millisecond {
		t.Fatalf("Open with negative timeout: %v after %v", err, time.Since(start))
	}

	// A waiting Open succeeds once the holder closes the store.
	done := make(chan error, 1)
	go func() {
		s, err := Open(dir, Options{LockTimeout: 20 * time.Second})
		if err == nil {
			err = s.Close()
		}
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Open returned (%v) while the store was held", err)
	default:
	}
	h.stdin.Close()
	if err := <-done; err != nil {
		t.Fatalf("Open after holder exited: %v", err)
	}
}

func TestKilledHolderReleasesStoreIntact(t *testing.T) {
	dir := t.TempDir()
	h := startHelper(t, "write", dir)
	var stored []Digest
	for range 20 {
		d, err := ParseDigest(h.line(t))
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, d)
	}
	// Kill it mid-write: no chance to close the store or release the lock.
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	h.cmd.Wait()

	lb := &logBuf{}
	s, err := Open(dir, Options{LockTimeout: 5 * time.Second, Logf: lb.logf})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if strings.Contains(lb.String(), "in use") {
		t.Fatalf("a dead process's lock made Open wait:\n%s", lb)
	}
	for i, d := range stored {
		got, err := s.Get(d)
		if err != nil {
			t.Fatalf("blob %d acknowledged before the kill: %v", i, err)
		}
		if Sum(got) != d {
			t.Fatal("wrong bytes")
		}
	}
	// The store still takes writes.
	mustPut(t, s, randBytes(5, 1<<20))
}

// A reader never waits for a writer: it reads a snapshot, sees every blob acknowledged
// before it opened, and leaves the writer's files alone (the writer goes on writing).
func TestReaderDoesNotWaitForWriter(t *testing.T) {
	dir := t.TempDir()
	h := startHelper(t, "write", dir)
	var stored []Digest
	for range 30 {
		d, err := ParseDigest(h.line(t))
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, d)
	}
	lb := &logBuf{}
	start := time.Now()
	s, err := OpenReader(dir, Options{LockTimeout: 20 * time.Second, Logf: lb.logf})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("OpenReader took %v", el)
	}
	if !strings.Contains(lb.String(), "reading a snapshot") || strings.Contains(lb.String(), "waiting") {
		t.Errorf("log:\n%s", lb)
	}
	for i, d := range stored {
		got, err := s.Get(d)
		if err != nil || Sum(got) != d {
			t.Fatalf("blob %d, acknowledged before the snapshot: %v", i, err)
		}
	}
	snap := s.snapshot
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(snap); !os.IsNotExist(err) {
		t.Errorf("snapshot %s left behind", snap)
	}
	// The writer is unharmed.
	for range 5 {
		if _, err := ParseDigest(h.line(t)); err != nil {
			t.Fatal(err)
		}
	}
}
