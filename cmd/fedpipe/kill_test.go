package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/pipeline"
)

// TestMain lets the test binary act as the fedpipe command: with FEDPIPE_TEST_MAIN=1 it
// runs main instead of the tests, so kill tests need no separate build.
func TestMain(m *testing.M) {
	if os.Getenv("FEDPIPE_TEST_MAIN") == "1" {
		code := run(os.Args[1:], os.Stdout, os.Stderr)
		if path := os.Getenv("FEDPIPE_TEST_PEAK_RSS"); path != "" {
			writePeakRSS(path)
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// A run long enough to be killed in every stage kind: two methods, many rounds, a
// checkpoint after each.
const killManifest = `name: kill
seeds: [0]
dataset: {name: synthetic, alpha: 1, beta: 1, devices: 10}
partition: {scheme: natural}
model: {arch: mlp, hidden: [32]}
train: {rounds: 40, participation: 0.5, local_epochs: 2, batch_size: 16, lr: 0.05, momentum: 0.5, eval_every: 5, checkpoint_every: 1}
methods:
  - name: fedavg
  - name: local
`

func subprocess(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "FEDPIPE_TEST_MAIN=1")
	return cmd
}

// outputs runs fedpipe to completion and returns every stage's output digests, and
// whether a train stage resumed from a checkpoint.
func outputs(t *testing.T, manifest, store string) (map[string]map[string]string, bool) {
	t.Helper()
	cmd := subprocess("run", manifest, "--store", store, "--json")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("run after interruption: %v\n%s", err, errb.String())
	}
	var r runOut
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	m := map[string]map[string]string{}
	resumed := false
	for _, s := range r.Stages {
		m[s.Name] = s.Outputs
		resumed = resumed || s.ResumedFrom > 0
	}
	return m, resumed
}

// Kill -9 at random points, rerun: every final output is bit-identical to an
// uninterrupted run's. FEDPIPE_KILL_POINTS sets how many points (default 5).
func TestKillAnywhereThenResumeIsBitIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("kills several runs")
	}
	points := 5
	if v, err := strconv.Atoi(os.Getenv("FEDPIPE_KILL_POINTS")); err == nil && v > 0 {
		points = v
	}
	dir := t.TempDir()
	m := writeManifest(t, dir, killManifest)
	start := time.Now()
	want, _ := outputs(t, m, filepath.Join(dir, "reference"))
	length := time.Since(start)
	t.Logf("uninterrupted run: %v", length.Round(time.Millisecond))
	rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	resumed := 0
	for i := 0; i < points; i++ {
		store := filepath.Join(dir, "s"+strconv.Itoa(i))
		at := time.Duration(rnd.Int64N(int64(length)))
		cmd := subprocess("run", m, "--store", store, "--quiet")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(at)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		got, res := outputs(t, m, store)
		if res {
			resumed++
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("killed after %v: final outputs differ from the uninterrupted run", at)
		}
	}
	t.Logf("%d kill points, %d of them resumed a train stage from its checkpoint", points, resumed)
	if points >= 5 && resumed == 0 {
		t.Error("no kill point ever resumed from a checkpoint; the test is not exercising resume")
	}
}

// SIGINT stops cleanly with exit 130 and the command to resume; the resumed run matches.
func TestInterruptExits130AndResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("interrupts a run")
	}
	dir := t.TempDir()
	m := writeManifest(t, dir, killManifest)
	want, _ := outputs(t, m, filepath.Join(dir, "reference"))
	store := filepath.Join(dir, "s")
	cmd := subprocess("run", m, "--store", store)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until training is under way, then interrupt.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(errb.String(), "train") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 130 {
		t.Fatalf("exit %d after SIGINT, want 130 (the run may have finished first); stderr:\n%s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "Resume with:") || !strings.Contains(errb.String(), "fedpipe run "+m) {
		t.Errorf("no resume command in:\n%s", errb.String())
	}
	// status says where the rerun will start.
	var st bytes.Buffer
	if code := run([]string{"status", m, "--store", store}, &st, io.Discard); code != exitOK ||
		!regexp.MustCompile(`(?m)^missing .* train .*\(never ran; resumes from its checkpoint after round [0-9]+\)$`).MatchString(st.String()) {
		t.Errorf("status (exit %d) does not say the train stage resumes:\n%s", code, st.String())
	}
	got, resumed := outputs(t, m, store)
	if !resumed {
		t.Error("the rerun did not resume from a checkpoint")
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("resumed outputs differ from an uninterrupted run")
	}
	// The result's provenance says which rounds each process trained.
	var ls bytes.Buffer
	if code := run([]string{"ls", m, "--store", store, "--json"}, &ls, io.Discard); code != exitOK {
		t.Fatalf("ls exit %d", code)
	}
	var rows struct {
		Runs []struct {
			Provenance *pipeline.Provenance `json:"provenance"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(ls.Bytes(), &rows); err != nil || len(rows.Runs) != 2 || rows.Runs[0].Provenance == nil || rows.Runs[1].Provenance == nil {
		t.Fatalf("ls --json: %v\n%s", err, ls.String())
	}
	parted := 0
	for _, r := range rows.Runs {
		segs := r.Provenance.Segments
		if len(segs) == 0 {
			continue // trained by one process
		}
		parted++
		if len(segs) != 2 || segs[0].From != 1 || segs[1].From != segs[0].To+1 || segs[1].To != 40 ||
			segs[0].CPU == "" || segs[1].CPU == "" || segs[0].Threads <= 0 {
			t.Errorf("segments of the resumed train stage: %+v, want rounds 1..k then k+1..40, each with its machine", segs)
		}
	}
	if parted == 0 {
		t.Error("no run's provenance says it was trained in two parts")
	}
}

// A second run on a store in use waits up to --lock-timeout, says why, and fails clearly.
func TestConcurrentRunWaitsThenFails(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two processes")
	}
	dir := t.TempDir()
	m := writeManifest(t, dir, killManifest)
	store := filepath.Join(dir, "s")
	first := subprocess("run", m, "--store", store, "--quiet")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Process.Kill(); _ = first.Wait() }()
	time.Sleep(500 * time.Millisecond)
	second := subprocess("run", m, "--store", store, "--lock-timeout", "300ms")
	var errb bytes.Buffer
	second.Stderr = &errb
	err := second.Run()
	if err == nil {
		t.Skip("the first run finished before the second started")
	}
	msg := errb.String()
	if !strings.Contains(msg, "in use by another fedpipe process") || !strings.Contains(msg, store) {
		t.Errorf("second run's message:\n%s", msg)
	}
}
