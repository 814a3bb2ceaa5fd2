package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote/s3test"
)

const bucket = "fedpipe-test"

// logLines collects a Remote's log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) Logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.TrimSpace(fmt.Sprintf(format, args...)))
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// A place is where a remote keeps its objects, for tests that run against each.
type place struct {
	address string
	env     func(string) string
	// objectPath is the file holding object key (cas/…, lease/…) of the remote.
	objectPath func(key string) string
}

// eachBackend runs test against an S3 server (skipped, outside CI, when versitygw is not
// installed) and against a directory (never skipped), each holding one remote.
func eachBackend(t *testing.T, test func(t *testing.T, b place)) {
	t.Run("s3", func(t *testing.T) {
		s := s3test.Start(t, bucket)
		test(t, place{address: "s3://" + bucket + "/team/sweep", env: s.Getenv,
			objectPath: func(key string) string { return s.ObjectPath(bucket, "team/sweep/"+key) }})
	})
	t.Run("dir", func(t *testing.T) { test(t, dirBackend(t)) })
}

// dirBackend is a directory remote in a fresh temporary folder.
func dirBackend(t *testing.T) place {
	root := filepath.Join(t.TempDir(), "sweep")
	return place{address: "file://" + filepath.ToSlash(root), env: func(string) string { return "" },
		objectPath: func(key string) string { return filepath.Join(root, filepath.FromSlash(key)) }}
}

// open opens another Remote (another machine) on the backend.
func (b place) open(t *testing.T, opt Options) (*Remote, *logLines) {
	t.Helper()
	logs := &logLines{}
	opt.Logf = logs.Logf
	opt.Env = b.env
	r, err := Open(context.Background(), b.address, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r, logs
}

func openStore(t *testing.T) *artifacts.Store {
	t.Helper()
	st, err := artifacts.Open(t.TempDir(), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// putAction stores outputs (large enough to be chunked, and small) and an action naming them.
func putAction(t *testing.T, st *artifacts.Store, seed byte) (artifacts.Digest, artifacts.Action) {
	t.Helper()
	big := make([]byte, 300<<10)
	for i := range big {
		big[i] = byte(i*7) ^ seed
	}
	a := artifacts.Action{Outputs: map[string]artifacts.Digest{}, Meta: map[string]string{"name": "train x"}}
	for name, b := range map[string][]byte{"model": big, "metrics": []byte("round,acc\n1,0.5\n" + string(seed))} {
		d, err := st.Put(b)
		if err != nil {
			t.Fatal(err)
		}
		a.Outputs[name] = d
	}
	key := artifacts.Sum([]byte{'k', seed})
	if err := st.PutAction(key, a); err != nil {
		t.Fatal(err)
	}
	return key, a
}

func TestPushThenFetchIntoAnotherStore(t *testing.T) {
	eachBackend(t, testPushThenFetchIntoAnotherStore)
}

func testPushThenFetchIntoAnotherStore(t *testing.T, s place) {
	r, _ := s.open(t, Options{})
	ctx := context.Background()
	src, dst := openStore(t), openStore(t)
	key, a := putAction(t, src, 1)

	if ok, err := r.HasAction(ctx, key); err != nil || ok {
		t.Fatalf("HasAction before push = %v, %v; want false", ok, err)
	}
	tr, err := r.PushAction(ctx, src, key, a)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Objects != 2 || tr.Bytes < 300<<10 {
		t.Fatalf("first push sent %+v, want both blobs", tr)
	}
	if tr, err = r.PushAction(ctx, src, key, a); err != nil || tr.Objects != 0 {
		t.Fatalf("second push sent %+v (%v), want nothing", tr, err)
	}
	if ok, err := r.HasAction(ctx, key); err != nil || !ok {
		t.Fatalf("HasAction after push = %v, %v", ok, err)
	}
	// A fresh Remote (another machine) fetches into an empty store.
	r2, _ := s.open(t, Options{})
	got, ok, tr, err := r2.FetchAction(ctx, dst, key)
	if err != nil || !ok {
		t.Fatalf("FetchAction = %v, %v", ok, err)
	}
	if tr.Objects != 2 || got.Outputs["model"] != a.Outputs["model"] || got.Meta["name"] != "train x" {
		t.Fatalf("fetched %+v (%+v), want %+v", got, tr, a)
	}
	if la, ok, err := dst.GetAction(key); err != nil || !ok || la.Outputs["metrics"] != a.Outputs["metrics"] {
		t.Fatalf("local action after fetch: %+v %v %v", la, ok, err)
	}
	if _, ok, _, err := r2.FetchAction(ctx, dst, artifacts.Sum([]byte("absent"))); ok || err != nil {
		t.Fatalf("absent key: ok=%v err=%v, want a plain miss", ok, err)
	}
}

// A flipped byte in a remote blob is a logged miss; the next push of that blob repairs it.
func TestCorruptRemoteBlobIsAMissAndPushRepairs(t *testing.T) {
	eachBackend(t, testCorruptRemoteBlobIsAMissAndPushRepairs)
}

func testCorruptRemoteBlobIsAMissAndPushRepairs(t *testing.T, s place) {
	r, _ := s.open(t, Options{})
	ctx := context.Background()
	src := openStore(t)
	key, a := putAction(t, src, 2)
	if _, err := r.PushAction(ctx, src, key, a); err != nil {
		t.Fatal(err)
	}
	path := s.objectPath("cas/" + a.Outputs["model"].String())
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff // the object may be a zstd frame of the blob (blobcodec.go)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}

	r2, logs := s.open(t, Options{})
	dst := openStore(t)
	if _, ok, _, err := r2.FetchAction(ctx, dst, key); ok || !errors.Is(err, artifacts.ErrNotFound) || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("FetchAction of a corrupt blob: ok=%v err=%v, want a miss saying why", ok, err)
	}
	if !strings.Contains(logs.String(), "is corrupt") {
		t.Fatalf("corruption not logged: %q", logs)
	}
	if _, ok, _ := dst.GetAction(key); ok {
		t.Fatal("a miss left an action in the local store")
	}
	// The process that found it corrupt rewrites it on its next push.
	tr, err := r2.PushAction(ctx, src, key, a)
	if err != nil || tr.Objects != 1 {
		t.Fatalf("repairing push sent %+v (%v), want the corrupt blob", tr, err)
	}
	if _, ok, _, err := r2.FetchAction(ctx, dst, key); !ok || err != nil {
		t.Fatalf("FetchAction after repair: ok=%v err=%v", ok, err)
	}
}

func TestMissingRemoteBlobIsAMiss(t *testing.T) { eachBackend(t, testMissingRemoteBlobIsAMiss) }

func testMissingRemoteBlobIsAMiss(t *testing.T, s place) {
	r, _ := s.open(t, Options{})
	ctx := context.Background()
	src := openStore(t)
	key, a := putAction(t, src, 3)
	if _, err := r.PushAction(ctx, src, key, a); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(s.objectPath("cas/" + a.Outputs["metrics"].String())); err != nil {
		t.Fatal(err)
	}
	r2, logs := s.open(t, Options{})
	if _, ok, _, err := r2.FetchAction(ctx, openStore(t), key); ok || !errors.Is(err, artifacts.ErrNotFound) {
		t.Fatalf("ok=%v err=%v, want a miss", ok, err)
	}
	if !strings.Contains(logs.String(), "not in the remote") {
		t.Fatalf("missing blob not logged: %q", logs)
	}
	if _, err := r2.GetBlob(ctx, a.Outputs["metrics"]); !errors.Is(err, artifacts.ErrNotFound) {
		t.Fatalf("GetBlob of a missing blob: %v, want ErrNotFound", err)
	}
}

func TestCheckpointRoundTrip(t *testing.T) { eachBackend(t, testCheckpointRoundTrip) }

func testCheckpointRoundTrip(t *testing.T, s place) {
	r, _ := s.open(t, Options{Holder: "w1"})
	ctx := context.Background()
	src, dst := openStore(t), openStore(t)
	blob, _ := src.Put([]byte("client 0 after round 3"))
	index, _ := src.Put([]byte(`{"round":3}`))
	stage := artifacts.Sum([]byte("stage"))
	if _, err := r.PushCheckpoint(ctx, src, stage, Checkpoint{Round: 3, Index: index, Blobs: []artifacts.Digest{blob}}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _, err := r.FetchCheckpoint(ctx, dst, stage, 3); ok || err != nil {
		t.Fatalf("a checkpoint no later than the local one was fetched: %v %v", ok, err)
	}
	cp, ok, tr, err := r.FetchCheckpoint(ctx, dst, stage, 2)
	if err != nil || !ok || cp.Round != 3 || cp.Index != index || cp.Holder != "w1" || tr.Objects != 2 {
		t.Fatalf("FetchCheckpoint = %+v %v %+v %v", cp, ok, tr, err)
	}
	if b, err := dst.Get(blob); err != nil || string(b) != "client 0 after round 3" {
		t.Fatalf("checkpoint blob not stored locally: %q %v", b, err)
	}
	if err := r.DeleteCheckpoint(ctx, stage); err != nil {
		t.Fatal(err)
	}
	if _, ok, _, err := r.FetchCheckpoint(ctx, openStore(t), stage, 0); ok || err != nil {
		t.Fatalf("deleted checkpoint fetched: %v %v", ok, err)
	}
	if err := r.DeleteCheckpoint(ctx, stage); err != nil {
		t.Fatalf("deleting an absent checkpoint: %v", err)
	}
}

// Wrong credentials fail with a message that names the remote but neither key.
func TestCredentialsNeverInErrors(t *testing.T) {
	s := s3test.Start(t, bucket)
	env := func(k string) string {
		if k == "AWS_SECRET_ACCESS_KEY" {
			return "wrong-" + s3test.SecretKey
		}
		return s.Getenv(k)
	}
	_, err := Open(context.Background(), "s3://"+bucket+"/p", Options{Env: env})
	if err == nil {
		t.Fatal("Open with a wrong secret succeeded")
	}
	msg := err.Error()
	if strings.Contains(msg, s3test.SecretKey) || strings.Contains(msg, s3test.AccessKey) {
		t.Fatalf("credentials in the error: %s", msg)
	}
	if !strings.Contains(msg, "s3://"+bucket+"/p") {
		t.Fatalf("error does not name the remote: %s", msg)
	}
	// A missing bucket is named.
	_, err = Open(context.Background(), "s3://no-such-bucket/p", Options{Env: s.Getenv})
	if err == nil || !strings.Contains(err.Error(), `bucket "no-such-bucket" does not exist`) {
		t.Fatalf("missing bucket: %v", err)
	}
}

// scrub removes every credential from a message, and keeps context errors visible.
func TestScrub(t *testing.T) {
	r := &Remote{secrets: []string{"AKIDSECRETID", "s3cr3t"}}
	err := r.scrub(errors.Join(context.Canceled, errors.New("denied for AKIDSECRETID with s3cr3t")))
	if strings.Contains(err.Error(), "AKIDSECRETID") || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("not scrubbed: %v", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatal("scrubbing hid context.Canceled")
	}
	if got := r.scrubString("no secret here"); got != "no secret here" {
		t.Fatal(got)
	}
}
