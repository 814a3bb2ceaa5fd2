package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/artifacts/remote/s3test"
)

// Eight train cells (2 methods × 2 learning rates × 2 seeds) on Synthetic data with a
// small MLP: about a second of training each on two busy cores.
const remoteSweep = `name: remote-sweep
seeds: [0, 1]
dataset: {name: synthetic, alpha: 0.5, beta: 0.5, devices: 20}
partition: {scheme: natural, test_fraction: 0.25}
model: {arch: mlp, hidden: [64]}
train: {rounds: 10, participation: 0.5, local_epochs: 2, batch_size: 32, lr: 0.05, eval_every: 5, checkpoint_every: 1}
methods:
  - name: fedavg
  - name: local
grid: {train.lr: [0.05, 0.1]}
`

// Two long train stages (a checkpoint every round), so that a worker can be killed in the
// middle of one.
const remoteKill = `name: remote-kill
seeds: [0]
dataset: {name: synthetic, alpha: 1, beta: 1, devices: 20}
partition: {scheme: natural}
model: {arch: mlp, hidden: [64]}
train: {rounds: 40, participation: 0.5, local_epochs: 2, batch_size: 16, lr: 0.05, eval_every: 10, checkpoint_every: 1}
methods:
  - name: fedavg
  - name: local
`

const testBucket = "fedpipe"

// remoteHarness runs fedpipe processes against one remote — an S3 server, or a directory
// (srv nil) — and keeps everything they print, to check that no credential ever appears.
type remoteHarness struct {
	t   *testing.T
	srv *s3test.Server
	dir string

	mu         sync.Mutex
	transcript bytes.Buffer
}

func newRemoteHarness(t *testing.T) *remoteHarness {
	if testing.Short() {
		t.Skip("runs several fedpipe processes against an S3 server")
	}
	return &remoteHarness{t: t, srv: s3test.Start(t, testBucket), dir: t.TempDir()}
}

// onEachRemote runs test as subtests against an S3 server ("s3"; skipped outside CI
// without versitygw) and a directory remote ("dir"; never skipped for want of a server).
func onEachRemote(t *testing.T, test func(h *remoteHarness)) {
	t.Run("s3", func(t *testing.T) { test(newRemoteHarness(t)) })
	t.Run("dir", func(t *testing.T) {
		if testing.Short() {
			t.Skip("runs several fedpipe processes")
		}
		h := &remoteHarness{t: t, dir: t.TempDir()}
		// The remote's parent folder exists, as a mounted shared filesystem would; each
		// prefix's own folder is created by the first fedpipe that opens it.
		if err := os.Mkdir(filepath.Join(h.dir, "remote"), 0o755); err != nil {
			t.Fatal(err)
		}
		test(h)
	})
}

// proc is a fedpipe process started by the harness.
type proc struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
	h        *remoteHarness
}

// start runs fedpipe with args in a process whose environment reaches the server (and
// holds no other AWS or fedpipe settings).
func (h *remoteHarness) start(args ...string) *proc {
	h.t.Helper()
	p := &proc{cmd: exec.Command(os.Args[0], args...), h: h}
	p.cmd.Env = h.env()
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
	if err := p.cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// env is the environment of the processes the harness starts: the test binary acts as
// fedpipe (TestMain), reaches the server, and sees no other AWS or fedpipe settings.
func (h *remoteHarness) env() []string {
	env := []string{"FEDPIPE_TEST_MAIN=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "FEDPIPE_REMOTE=") && !strings.HasPrefix(kv, "FEDPIPE_STORE=") {
			env = append(env, kv)
		}
	}
	if h.srv == nil {
		return env
	}
	return append(env, h.srv.Env()...)
}

// wait waits for the process and returns its exit code; its output joins the transcript.
func (p *proc) wait() int {
	err := p.cmd.Wait()
	p.h.mu.Lock()
	p.h.transcript.Write(p.out.Bytes())
	p.h.transcript.Write(p.err.Bytes())
	p.h.mu.Unlock()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		p.h.t.Fatal(err)
	}
	return 0
}

// json waits for a run that must succeed and decodes its --json output.
func (p *proc) json() runOut {
	p.h.t.Helper()
	if code := p.wait(); code != 0 {
		p.h.t.Fatalf("%v exited %d:\n%s", p.cmd.Args[1:], code, p.err.String())
	}
	var r runOut
	if err := json.Unmarshal(p.out.Bytes(), &r); err != nil {
		p.h.t.Fatalf("%v: %v\n%s", p.cmd.Args[1:], err, p.out.String())
	}
	return r
}

func (h *remoteHarness) store(name string) string { return filepath.Join(h.dir, name) }

// remoteURL is the address of the remote's part prefix: s3://BUCKET/PREFIX, or
// file:///DIR/PREFIX.
func (h *remoteHarness) remoteURL(prefix string) string {
	if h.srv == nil {
		return "file://" + filepath.Join(h.dir, "remote", prefix)
	}
	return "s3://" + testBucket + "/" + prefix
}

// remotePath is the address of the remote's part prefix as a plain path (a directory
// remote), else its URL.
func (h *remoteHarness) remotePath(prefix string) string {
	if h.srv == nil {
		return filepath.Join(h.dir, "remote", prefix)
	}
	return h.remoteURL(prefix)
}

// objectPath is the file that holds the remote's object key ("PREFIX/cas/…").
func (h *remoteHarness) objectPath(key string) string {
	if h.srv == nil {
		return filepath.Join(h.dir, "remote", filepath.FromSlash(key))
	}
	return h.srv.ObjectPath(testBucket, key)
}

// checkNoCredentials fails if any output of any process held a credential.
func (h *remoteHarness) checkNoCredentials() {
	h.mu.Lock()
	defer h.mu.Unlock()
	all := h.transcript.String()
	if all == "" {
		h.t.Fatal("no output collected")
	}
	for _, secret := range []string{s3test.AccessKey, s3test.SecretKey} {
		if strings.Contains(all, secret) {
			h.t.Errorf("a credential (%.6s…) appears in fedpipe's output", secret)
		}
	}
}

// sameOutputs fails unless every stage of got has the key and output digests of the
// stage of the same name in want.
func sameOutputs(t *testing.T, label string, want, got runOut) {
	t.Helper()
	byName := map[string]stageJSON{}
	for _, s := range want.Stages {
		byName[s.Name] = s
	}
	if len(got.Stages) != len(want.Stages) {
		t.Fatalf("%s: %d stages, want %d", label, len(got.Stages), len(want.Stages))
	}
	for _, s := range got.Stages {
		w := byName[s.Name]
		if s.Key != w.Key {
			t.Errorf("%s: %s has key %s, want %s", label, s.Name, s.Key, w.Key)
		}
		for name, d := range w.Outputs {
			if s.Outputs[name] != d {
				t.Errorf("%s: %s output %s = %.12s, want %.12s", label, s.Name, name, s.Outputs[name], d)
			}
		}
		if len(s.Outputs) != len(w.Outputs) {
			t.Errorf("%s: %s has %d outputs, want %d", label, s.Name, len(s.Outputs), len(w.Outputs))
		}
	}
}

func count(r runOut, kind, state string) int {
	n := 0
	for _, s := range r.Stages {
		if (kind == "" || s.Kind == kind) && s.State == state {
			n++
		}
	}
	return n
}

// Two workers with separate stores split a sweep through the remote: each train stage
// runs exactly once in total and every digest equals a single process's. Then an empty
// store with the remote runs nothing; a flipped byte in a remote blob is detected and
// recomputed; status, push and pull say what the remote holds; no output shows a
// credential.
func TestRemoteWorkersSplitASweep(t *testing.T) { onEachRemote(t, testRemoteWorkersSplitASweep) }

func testRemoteWorkersSplitASweep(h *remoteHarness) {
	t := h.t
	m := writeManifest(t, h.dir, remoteSweep)

	ref := h.start("run", m, "--store", h.store("ref"), "--json").json()
	trains := count(ref, "train", "ran")
	if trains < 8 {
		t.Fatalf("the sweep has %d train cells, want at least 8", trains)
	}

	start := time.Now()
	one := h.start("run", m, "--store", h.store("one"), "--remote", h.remoteURL("one"), "--worker", "--json").json()
	oneWall := time.Since(start)
	sameOutputs(t, "one worker", ref, one)

	start = time.Now()
	pa := h.start("run", m, "--store", h.store("a"), "--remote", h.remoteURL("two"), "--worker", "--lease-ttl", "15s", "--json")
	pb := h.start("run", m, "--store", h.store("b"), "--remote", h.remoteURL("two"), "--worker", "--lease-ttl", "15s", "--json")
	a, b := pa.json(), pb.json()
	twoWall := time.Since(start)
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("%d train cells: one worker %.1fs, two workers %.1fs wall (load average %s)",
		trains, oneWall.Seconds(), twoWall.Seconds(), strings.TrimSpace(string(load)))

	ranBy := map[string]int{}
	for _, r := range []runOut{a, b} {
		for _, s := range r.Stages {
			if s.Kind == "train" && s.State == "ran" {
				ranBy[s.Name]++
			}
		}
	}
	for _, s := range ref.Stages {
		if s.Kind == "train" && ranBy[s.Name] != 1 {
			t.Errorf("%s ran %d times across the two workers, want once", s.Name, ranBy[s.Name])
		}
	}
	// Not an error: a worker that started late on a loaded machine may find every stage
	// claimed, which is the design; the counts are logged.
	t.Logf("train stages run by worker a: %d, by worker b: %d", count(a, "train", "ran"), count(b, "train", "ran"))
	sameOutputs(t, "worker a", ref, a)
	sameOutputs(t, "worker b", ref, b)

	// A third, empty store: everything comes from the remote.
	third := h.start("run", m, "--store", h.store("third"), "--remote", h.remoteURL("two"), "--json").json()
	if n := count(third, "", "ran"); n != 0 {
		t.Errorf("an empty store with the remote ran %d stages, want 0", n)
	}
	sameOutputs(t, "third store", ref, third)
	if third.Report != ref.Report || ref.Report == "" {
		t.Errorf("the third store's report differs from the single process's:\n%s\n---\n%s", third.Report, ref.Report)
	}

	// status says "remote" for every stage an empty store would fetch.
	st := h.start("status", m, "--store", h.store("status"), "--remote", h.remoteURL("two"), "--json")
	if st.wait() != 0 {
		t.Fatalf("status: %s", st.err.String())
	}
	var plan struct{ Stages []stageJSON }
	if err := json.Unmarshal(st.out.Bytes(), &plan); err != nil {
		t.Fatal(err)
	}
	for _, s := range plan.Stages {
		if s.State != "remote" {
			t.Errorf("status: %s is %q (%s), want remote", s.Name, s.State, s.Reason)
		}
	}

	// A flipped byte in a remote blob is found, and that stage (only) recomputed.
	var victim stageJSON
	for _, s := range ref.Stages {
		if s.Kind == "train" {
			victim = s
			break
		}
	}
	obj := h.objectPath("two/cas/" + victim.Outputs["metrics"])
	blob, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	blob[len(blob)/2] ^= 0x01
	if err := os.WriteFile(obj, blob, 0o644); err != nil {
		t.Fatal(err)
	}
	fourth := h.start("run", m, "--store", h.store("fourth"), "--remote", h.remoteURL("two"), "--json").json()
	sameOutputs(t, "after corruption", ref, fourth)
	for _, s := range fourth.Stages {
		wantRan := s.Name == victim.Name
		if (s.State == "ran") != wantRan {
			t.Errorf("after corruption: %s is %s (%s); want only %s to run", s.Name, s.State, s.Reason, victim.Name)
		}
		if wantRan && !strings.Contains(s.Reason, "corrupt") {
			t.Errorf("the recomputed stage's reason does not mention the corruption: %q", s.Reason)
		}
	}
	repaired, _ := os.ReadFile(obj)
	if d, err := artifacts.ParseDigest(victim.Outputs["metrics"]); err != nil {
		t.Fatal(err)
	} else if _, ok := remote.DecodeBlob(repaired, d); !ok {
		t.Error("the corrupt remote blob was not rewritten by the stage that recomputed it")
	}

	// push the reference store to a fresh prefix, then pull it into an empty store.
	if r := h.sync("push", m, "ref", "pushed"); r.Results != len(ref.Stages) || r.Blobs == 0 || r.Bytes == 0 {
		t.Errorf("push reported %+v, want %d results with blobs and bytes", r, len(ref.Stages))
	}
	if r := h.sync("pull", m, "pulled", "pushed"); r.Results != len(ref.Stages) || r.Bytes == 0 {
		t.Errorf("pull reported %+v, want %d results", r, len(ref.Stages))
	}
	if r := h.sync("pull", m, "pulled", "pushed"); r.Results != 0 || r.Present != len(ref.Stages) {
		t.Errorf("a second pull reported %+v, want everything present", r)
	}
	pulled := h.start("run", m, "--store", h.store("pulled"), "--json").json()
	if n := count(pulled, "", "ran"); n != 0 {
		t.Errorf("a pulled store ran %d stages, want 0", n)
	}
	sameOutputs(t, "pulled store", ref, pulled)

	h.checkNoCredentials()
}

// syncOut is what push and pull print with --json.
type syncOut struct {
	Remote                                 string
	Results, Present, Missing, Checkpoints int
	Partial                                int
	Blobs                                  int
	Bytes                                  int64
}

// sync runs push or pull of manifest between a store and a prefix and decodes its report.
func (h *remoteHarness) sync(cmd, manifest, store, prefix string, flags ...string) syncOut {
	h.t.Helper()
	p := h.start(append([]string{cmd, manifest, "--store", h.store(store), "--remote", h.remoteURL(prefix), "--json"}, flags...)...)
	if code := p.wait(); code != 0 {
		h.t.Fatalf("%s exited %d: %s", cmd, code, p.err.String())
	}
	var r syncOut
	if err := json.Unmarshal(p.out.Bytes(), &r); err != nil {
		h.t.Fatalf("%s: %v\n%s", cmd, err, p.out.String())
	}
	if r.Remote != h.remoteURL(prefix) {
		h.t.Errorf("%s names the remote %q", cmd, r.Remote)
	}
	return r
}

// A worker killed with SIGKILL in the middle of a train stage: the other worker finishes
// everything, taking the stage over once its lease expires and resuming from the last
// checkpoint the dead worker pushed; every digest equals a single process's.
func TestRemoteWorkerKilledMidTrainIsTakenOver(t *testing.T) {
	onEachRemote(t, testRemoteWorkerKilledMidTrainIsTakenOver)
}

func testRemoteWorkerKilledMidTrainIsTakenOver(h *remoteHarness) {
	t := h.t
	m := writeManifest(t, h.dir, remoteKill)
	ref := h.start("run", m, "--store", h.store("ref"), "--json").json()

	// The two workers spell a directory remote differently (a path, a file URL).
	victim := h.start("run", m, "--store", h.store("victim"), "--remote", h.remotePath("kill"), "--worker", "--lease-ttl", "2s", "--json")
	survivor := h.start("run", m, "--store", h.store("survivor"), "--remote", h.remoteURL("kill"), "--worker", "--lease-ttl", "2s", "--json")

	// Kill the victim once it has pushed a checkpoint of a train stage it holds.
	ckptDir := h.objectPath("kill/ckpt")
	pid := victim.cmd.Process.Pid
	killedStage, killedRound := "", 0
	deadline := time.Now().Add(2 * time.Minute)
	for killedStage == "" {
		if time.Now().After(deadline) {
			victim.cmd.Process.Kill()
			t.Fatalf("the victim pushed no checkpoint within 2 minutes:\n%s", victim.err.String())
		}
		entries, _ := os.ReadDir(ckptDir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue // a directory remote's file being written
			}
			b, err := os.ReadFile(filepath.Join(ckptDir, e.Name()))
			var cp struct {
				Round  int    `json:"round"`
				Holder string `json:"holder"`
			}
			if err == nil && json.Unmarshal(b, &cp) == nil && strings.HasSuffix(cp.Holder, "/"+strconv.Itoa(pid)) && cp.Round >= 1 {
				if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				killedStage, killedRound = e.Name(), cp.Round
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	victim.wait()
	if _, err := os.Stat(h.objectPath("kill/ac/" + killedStage)); err == nil {
		t.Fatalf("the victim finished stage %.12s before it was killed; the test cannot check a takeover", killedStage)
	}
	t.Logf("killed the worker holding %.12s after it pushed round %d", killedStage, killedRound)

	s := survivor.json()
	sameOutputs(t, "survivor", ref, s)
	found := false
	for _, st := range s.Stages {
		if st.Key != killedStage {
			continue
		}
		found = true
		if st.State != "ran" || st.ResumedFrom < killedRound {
			t.Errorf("the killed stage %s: state %s, resumed_from %d; want ran, resumed from round ≥ %d", st.Name, st.State, st.ResumedFrom, killedRound)
		}
		if !strings.Contains(st.Reason, "took over") {
			t.Errorf("the killed stage's reason does not say it was taken over: %q", st.Reason)
		}
	}
	if !found {
		t.Fatalf("the survivor's output has no stage with key %s", killedStage)
	}
	if n := count(s, "", "ran"); n == 0 {
		t.Fatal("the survivor ran nothing")
	}
	// Finished stages leave no lease and no checkpoint pointer behind, the dead worker's
	// included.
	for _, dir := range []string{"kill/lease", "kill/ckpt"} {
		filepath.WalkDir(h.objectPath(dir), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				t.Errorf("left in the remote after the sweep: %s", strings.TrimPrefix(path, h.objectPath("")))
			}
			return nil
		})
	}
	h.checkNoCredentials()
}

// --shard I/N: each shard runs its own train cells and skips the others' until the remote
// has them; the last shard fetches everything else and writes the report.
func TestRemoteShardsSplitStatically(t *testing.T) {
	h := newRemoteHarness(t)
	m := writeManifest(t, h.dir, strings.Replace(tinyManifest, "seeds: [0]", "seeds: [0, 1]", 1))
	ref := h.start("run", m, "--store", h.store("ref"), "--json").json()
	url := h.remoteURL("shards")
	s0 := h.start("run", m, "--store", h.store("s0"), "--remote", url, "--shard", "0/2", "--json").json()
	if n, want := count(s0, "train", "ran"), count(ref, "train", "ran")/2; n != want {
		t.Errorf("shard 0/2 ran %d train stages, want %d", n, want)
	}
	if n := count(s0, "", "skipped"); n == 0 {
		t.Error("shard 0/2 skipped nothing")
	}
	for _, s := range s0.Stages {
		if s.State == "skipped" && !strings.Contains(s.Reason, "shard 1/2") && !strings.Contains(s.Reason, "not run here") {
			t.Errorf("%s skipped for %q", s.Name, s.Reason)
		}
	}
	s1 := h.start("run", m, "--store", h.store("s1"), "--remote", url, "--shard", "1/2", "--json").json()
	if n := count(s1, "", "skipped"); n != 0 {
		t.Errorf("the second shard skipped %d stages, want 0 (the first one's are in the remote)", n)
	}
	if n, want := count(s1, "train", "ran"), count(ref, "train", "ran")/2; n != want {
		t.Errorf("shard 1/2 ran %d train stages, want %d", n, want)
	}
	sameOutputs(t, "shard 1/2", ref, s1)
	if s1.Report != ref.Report {
		t.Error("the last shard's report differs from a single process's")
	}
	h.checkNoCredentials()
}

// Remote flags are checked before anything runs: exit 2, with a message, no store made.
func TestRemoteFlagErrorsExitTwo(t *testing.T) {
	dir := t.TempDir()
	m := writeManifest(t, dir, tinyManifest)
	store := filepath.Join(dir, "store")
	t.Setenv("FEDPIPE_REMOTE", "")
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	for _, args := range [][]string{
		{"run", m, "--store", store, "--worker"},
		{"run", m, "--store", store, "--shard", "0/2"},
		{"run", m, "--store", store, "--remote", "s3://bkt-1/p", "--worker", "--shard", "0/2"},
		{"run", m, "--store", store, "--remote", "s3://bkt-1/p", "--shard", "2/2"},
		{"run", m, "--store", store, "--remote", "s3://bkt-1/p", "--worker", "--lease-ttl", "10ms"},
		{"run", m, "--store", store, "--remote", "gs://bkt-1/p"},
		{"status", m, "--store", store, "--remote", "s3://AKID:hunter2@bkt-1/p"},
		{"push", m, "--store", store},
		{"pull", m, "--store", store, "--remote", "s3://x"},
	} {
		code, _, errOut := fedpipe(t, args...)
		if code != exitInvalid || errOut == "" {
			t.Errorf("%q: exit %d (%q), want %d with a message", args, code, errOut, exitInvalid)
		}
		if strings.Contains(errOut, "hunter2") {
			t.Errorf("%q: the password in the address was printed: %s", args, errOut)
		}
	}
	if _, err := os.Stat(store); err == nil {
		t.Error("a store was created by a command with invalid flags")
	}
}

// The script `fedpipe slurm` prints runs: two array tasks, executed by bash as sbatch
// would (SLURM_ARRAY_* set), split the sweep through the remote; a store that then reads
// the remote runs nothing.
func TestSlurmScriptWorkersRun(t *testing.T) {
	h := newRemoteHarness(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	m := writeManifest(t, h.dir, strings.Replace(tinyManifest, "seeds: [0]", "seeds: [0, 1]", 1))
	url := h.remoteURL("slurm")
	code, script, errOut := fedpipe(t, "slurm", m, "--remote", url, "--workers", "2", "--lease-ttl", "15s", "--fedpipe", os.Args[0])
	if code != 0 {
		t.Fatalf("slurm: %s", errOut)
	}
	path := filepath.Join(h.dir, "sweep.sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var tasks []*proc
	for i := range 2 {
		p := &proc{cmd: exec.Command(bash, path), h: h}
		p.cmd.Env = append(h.env(), "TMPDIR="+h.dir, "SLURM_ARRAY_JOB_ID=77", "SLURM_ARRAY_TASK_ID="+strconv.Itoa(i))
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, p)
	}
	for i, p := range tasks {
		if code := p.wait(); code != 0 || !strings.Contains(p.out.String(), "stages ran") {
			t.Fatalf("array task %d exited %d:\n%s\n%s", i, code, p.out.String(), p.err.String())
		}
	}
	if left, _ := filepath.Glob(filepath.Join(h.dir, "fedpipe-77-*")); len(left) != 0 {
		t.Errorf("the tasks left their stores behind: %v", left)
	}
	after := h.start("run", m, "--store", h.store("after"), "--remote", url, "--json").json()
	if n := count(after, "", "ran"); n != 0 {
		t.Errorf("after the array job, a fresh store ran %d stages, want 0", n)
	}
	h.checkNoCredentials()
}

// push --checkpoints / pull --checkpoints carry an interrupted train stage's resume point
// to another machine, which continues it there with the same digests.
func TestPushPullCheckpointsResumeElsewhere(t *testing.T) {
	h := newRemoteHarness(t)
	m := writeManifest(t, h.dir, strings.Replace(remoteKill, "  - name: local\n", "", 1))
	ref := h.start("run", m, "--store", h.store("ref"), "--json").json()

	// Interrupt a run once it has checkpointed (its own remote shows when).
	laptop := h.start("run", m, "--store", h.store("laptop"), "--remote", h.remoteURL("laptop"))
	ckpt := h.srv.ObjectPath(testBucket, "laptop/ckpt")
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if entries, _ := os.ReadDir(ckpt); len(entries) > 0 {
			break
		}
		if time.Now().After(deadline) {
			laptop.cmd.Process.Kill()
			t.Fatal("no checkpoint within 2 minutes")
		}
	}
	laptop.cmd.Process.Signal(os.Interrupt)
	if code := laptop.wait(); code != exitInterrupted {
		t.Fatalf("interrupted run exited %d, want %d:\n%s", code, exitInterrupted, laptop.err.String())
	}

	if r := h.sync("push", m, "laptop", "shared", "--checkpoints"); r.Checkpoints != 1 {
		t.Fatalf("push --checkpoints reported %+v, want 1 checkpoint", r)
	}
	if r := h.sync("pull", m, "cluster", "shared", "--checkpoints"); r.Checkpoints != 1 || r.Bytes == 0 {
		t.Fatalf("pull --checkpoints reported %+v, want 1 checkpoint", r)
	}
	cluster := h.start("run", m, "--store", h.store("cluster"), "--json").json()
	sameOutputs(t, "resumed elsewhere", ref, cluster)
	for _, s := range cluster.Stages {
		if s.Kind == "train" && (s.State != "ran" || s.ResumedFrom == 0) {
			t.Errorf("%s: %s, resumed_from %d; want it resumed from the pulled checkpoint", s.Name, s.State, s.ResumedFrom)
		}
	}
	h.checkNoCredentials()
}

// push --results-only through a directory remote: a fresh store pulled from it verifies,
// lists and reports without recomputing anything; a manifest that adds shift stages
// (which read the trained models) recomputes the train stages it needs, with the digests
// of a store that kept everything.
func TestResultsOnlyPushThroughDirectoryRemote(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	dir := t.TempDir()
	m := writeManifest(t, dir, tinyManifest+"expect:\n  - {method: local, metric: final_client_mean, published: 0, tolerance: 1000}\n")
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	ref := runJSON(t, "run", m, "--store", src)
	rem, full := filepath.Join(dir, "results"), filepath.Join(dir, "full")
	var rep syncOut
	code, out, errOut := fedpipe(t, "push", m, "--store", src, "--remote", rem, "--results-only", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("push --results-only: exit %d %s %s", code, out, errOut)
	}
	if trains := count(ref, "train", "ran"); rep.Results != len(ref.Stages) || rep.Partial != trains {
		t.Fatalf("push --results-only reported %s; want %d results, %d partial", out, len(ref.Stages), trains)
	}
	if code, _, errOut := fedpipe(t, "push", m, "--store", src, "--remote", full); code != 0 {
		t.Fatalf("push: %s", errOut)
	}
	t.Logf("remote of %d stages: results only %d bytes, everything %d bytes", len(ref.Stages), duBytes(t, rem), duBytes(t, full))
	if duBytes(t, rem) >= duBytes(t, full) {
		t.Error("the results-only remote is not smaller than the full one")
	}

	if code, _, errOut := fedpipe(t, "pull", m, "--store", dst, "--remote", rem); code != 0 {
		t.Fatalf("pull: %s", errOut)
	}
	if code, out, errOut := fedpipe(t, "verify", m, "--store", dst); code != 0 {
		t.Fatalf("verify from a results-only store: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := fedpipe(t, "ls", m, "--store", dst); code != 0 || !strings.Contains(out, "2 runs: 2 cached") {
		t.Errorf("ls from a results-only store (want both runs cached):\n%s", out)
	}
	if code, _, errOut := fedpipe(t, "report", m, "--store", dst, "--out", filepath.Join(dir, "report")); code != 0 {
		t.Errorf("report from a results-only store: %s", errOut)
	}
	again := runJSON(t, "run", m, "--store", dst)
	if n := count(again, "", "ran"); n != 0 || again.Report != ref.Report {
		t.Errorf("a results-only store ran %d stages (want 0), or reported differently", n)
	}

	// Shift stages need the models: their train stages run again, evaluations stay cached.
	os.Mkdir(filepath.Join(dir, "shift"), 0o755)
	shifted := writeManifest(t, filepath.Join(dir, "shift"), tinyManifest+"shift: {degrees: [0, 1]}\n")
	want := runJSON(t, "run", shifted, "--store", src)
	got := runJSON(t, "run", shifted, "--store", dst)
	sameOutputs(t, "shift from a results-only store", want, got)
	for _, s := range got.Stages {
		switch s.Kind {
		case "train":
			if s.State != "ran" || !strings.Contains(s.Reason, "partial") {
				t.Errorf("%s: %s (%q), want recomputed because its result is partial", s.Name, s.State, s.Reason)
			}
		case "evaluate", "partition":
			if s.State != "cached" {
				t.Errorf("%s: %s, want cached", s.Name, s.State)
			}
		}
	}
}

// duBytes is the total size of the files under dir.
func duBytes(t *testing.T, dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
