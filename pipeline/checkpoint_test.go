package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
)

// TestSaveCheckpointStreams: blobs are stored as write passes them, the resume point moves
// only when write succeeds, and a failed or duplicated write keeps the previous one.
func TestSaveCheckpointStreams(t *testing.T) {
	s, err := artifacts.Open(t.TempDir(), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sc := &StageContext{Node: &Node{Kind: "train", Name: "train x", Key: Key{1, 2, 3}}, store: s}
	save := func(round int, blobs ...string) error {
		return sc.SaveCheckpoint(round, func(put func(string, []byte) error) error {
			for _, name := range blobs {
				if name == "fail" {
					return errors.New("encoding failed")
				}
				if err := put(name, []byte(name+" of round "+string(rune('0'+round)))); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := save(1, "global", "personal/00001"); err != nil {
		t.Fatal(err)
	}
	check := func(want int, names ...string) {
		t.Helper()
		round, blobs, ok := sc.loadLocalCheckpoint()
		if !ok || round != want || len(blobs) != len(names) {
			t.Fatalf("resume point: round %d, %d blobs, ok %v; want round %d with %v", round, len(blobs), ok, want, names)
		}
		for _, n := range names {
			if string(blobs[n]) != n+" of round "+string(rune('0'+want)) {
				t.Fatalf("blob %s = %q", n, blobs[n])
			}
		}
	}
	check(1, "global", "personal/00001")
	if err := save(2, "global", "fail"); err == nil || !strings.Contains(err.Error(), "encoding failed") {
		t.Fatalf("failing write: %v", err)
	}
	check(1, "global", "personal/00001")
	if err := save(3, "global", "global"); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate blob: %v", err)
	}
	check(1, "global", "personal/00001")
	if err := save(4, "global", "mask/00002"); err != nil {
		t.Fatal(err)
	}
	check(4, "global", "mask/00002")
	if got := resumeNote(s, sc.Node); got != "; resumes from its checkpoint after round 4" {
		t.Errorf("plan note %q", got)
	}
	if got := resumeNote(s, &Node{Kind: "train", Name: "train y", Key: Key{4}}); got != "" {
		t.Errorf("plan note of a stage without a checkpoint: %q", got)
	}
}

// Checkpoints that cannot reach the remote are kept locally; the failure is logged once,
// not at every round, and so is the first push that gets through again.
func TestCheckpointPushFailureLoggedOnce(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	dir := t.TempDir()
	r, err := remote.Open(ctx, dir, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	block := filepath.Join(dir, "cas") // a file where the blobs' folder should be
	if err := os.WriteFile(block, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &logProgress{}
	sc := &StageContext{Node: &Node{Kind: "train", Name: "train x", Key: Key{4, 5}}, store: s, progress: logs, ctx: ctx, remote: r}
	save := func(round int) {
		t.Helper()
		err := sc.SaveCheckpoint(round, func(put func(string, []byte) error) error {
			return put("global", []byte{byte(round)})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for round := 1; round <= 4; round++ {
		save(round)
	}
	if lines := logs.Take(); len(lines) != 1 || !strings.Contains(lines[0], "could not push the checkpoint after round 1") || !strings.Contains(lines[0], r.String()) {
		t.Errorf("4 failed pushes logged %q; want one line naming the remote", lines)
	}
	if round, _, ok := sc.loadLocalCheckpoint(); !ok || round != 4 {
		t.Errorf("local resume point: round %d %v, want 4", round, ok)
	}
	os.Remove(block)
	save(5)
	save(6)
	if lines := logs.Take(); len(lines) != 1 || !strings.Contains(lines[0], "again (after round 5)") {
		t.Errorf("after the remote came back: %q; want one line", lines)
	}
}
