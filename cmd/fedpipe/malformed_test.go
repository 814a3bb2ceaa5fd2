package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Limits every corpus case must stay within: invalid input is refused quickly and cheaply.
const (
	malformedMaxTime  = 5 * time.Second
	malformedMaxAlloc = 500 << 20
)

// TestMalformedCorpus runs every manifest in testdata/malformed. Each file begins with
// "# exit: N" and one or more "# want: TEXT" lines: the run must exit with N, its error
// output must contain every TEXT, and no store may be created. "CORPUS" in a manifest
// stands for the corpus directory (for dataset paths to corrupt files kept there).
//
// Optional directives: "# cmd: status" (or verify) runs that command instead of run;
// "# args: A B" appends flags (after --store, so they override it); "# as: fifo" or
// "# as: dir" passes a FIFO or a directory at the manifest's path instead of the file;
// "# mkfifo: NAME" makes a FIFO NAME in the case's directory, which "CASEDIR" stands for.
// The message must name the manifest file unless it is about a flag (a want starting
// with "--"). Each case must finish within 5 s and allocate less than 500 MB.
func TestMalformedCorpus(t *testing.T) {
	dir, err := filepath.Abs("testdata/malformed")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("corpus holds %d inputs, want at least 100", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			exit, wants, cmd, as, flagMsg := -1, []string{}, "run", "", false
			var extra, fifos []string
			for _, line := range strings.Split(string(raw), "\n") {
				if v, ok := strings.CutPrefix(line, "# exit: "); ok {
					exit, _ = strconv.Atoi(v)
				}
				if v, ok := strings.CutPrefix(line, "# want: "); ok {
					wants = append(wants, v)
					flagMsg = flagMsg || strings.HasPrefix(v, "--")
				}
				if v, ok := strings.CutPrefix(line, "# cmd: "); ok {
					cmd = v
				}
				if v, ok := strings.CutPrefix(line, "# args: "); ok {
					extra = append(extra, strings.Fields(v)...)
				}
				if v, ok := strings.CutPrefix(line, "# as: "); ok {
					as = v
				}
				if v, ok := strings.CutPrefix(line, "# mkfifo: "); ok {
					fifos = append(fifos, v)
				}
			}
			if exit < 0 || len(wants) == 0 {
				t.Fatal("corpus file lacks its # exit: and # want: lines")
			}
			tmp := t.TempDir()
			m := filepath.Join(tmp, filepath.Base(f))
			for _, name := range fifos {
				if err := syscall.Mkfifo(filepath.Join(tmp, name), 0o644); err != nil {
					t.Skip("no FIFOs:", err)
				}
			}
			switch as {
			case "":
				text := strings.ReplaceAll(strings.ReplaceAll(string(raw), "CORPUS", dir), "CASEDIR", tmp)
				err = os.WriteFile(m, []byte(text), 0o644)
			case "fifo":
				if runtime.GOOS == "windows" {
					t.Skip("no FIFOs")
				}
				err = syscall.Mkfifo(m, 0o644)
			case "dir":
				err = os.Mkdir(m, 0o755)
			default:
				t.Fatalf("unknown # as: %s", as)
			}
			if err != nil {
				t.Fatal(err)
			}
			store := filepath.Join(tmp, "store")
			type result struct {
				code       int
				errs       string
				took       time.Duration
				allocBytes uint64
			}
			done := make(chan result, 1)
			go func() {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				start := time.Now()
				code, _, errs := fedpipe(t, append([]string{cmd, m, "--store", store}, extra...)...)
				took := time.Since(start)
				runtime.ReadMemStats(&after)
				done <- result{code, errs, took, after.TotalAlloc - before.TotalAlloc}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(malformedMaxTime):
				t.Fatalf("still running after %v (a FIFO or a huge input blocking?)", malformedMaxTime)
			}
			if r.took > malformedMaxTime {
				t.Errorf("took %v, limit %v", r.took, malformedMaxTime)
			}
			if r.allocBytes > malformedMaxAlloc {
				t.Errorf("allocated %d MB, limit %d MB", r.allocBytes>>20, malformedMaxAlloc>>20)
			}
			if r.code != exit {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, exit, r.errs)
			}
			for _, w := range wants {
				if !strings.Contains(r.errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.errs)
				}
			}
			if !flagMsg && !strings.Contains(r.errs, m) {
				t.Errorf("the message does not name the manifest file:\n%s", r.errs)
			}
			if _, err := os.Stat(store); !os.IsNotExist(err) {
				t.Error("invalid input created the store")
			}
		})
	}
}
