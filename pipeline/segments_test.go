package pipeline

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
)

// A train stage saved by one process and resumed by another records where each part ran:
// the checkpoint carries the history of its rounds, the resuming process adds its own, and a
// checkpoint written before segments existed gives rounds "not recorded", not a wrong
// machine.
func TestCheckpointSegmentsAcrossProcesses(t *testing.T) {
	s, err := artifacts.Open(t.TempDir(), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	node := &Node{Kind: "train", Name: "train x", Key: Key{7}}
	proc := func(commit string) *StageContext {
		return &StageContext{Node: node, store: s, progress: Quiet{}, build: BuildInfo{Commit: commit}, start: time.Now()}
	}
	save := func(sc *StageContext, round int) {
		t.Helper()
		if err := sc.SaveCheckpoint(round, func(put func(string, []byte) error) error {
			return put("global", []byte{byte(round)})
		}); err != nil {
			t.Fatal(err)
		}
	}
	resume := func(sc *StageContext) int {
		t.Helper()
		round, _, ok := sc.loadLocalCheckpoint()
		if !ok {
			t.Fatal("no checkpoint")
		}
		sc.Resumed(round)
		return round
	}
	span := func(h []Segment) (out [][3]any) {
		for _, g := range h {
			out = append(out, [3]any{g.From, g.To, g.Commit})
		}
		return out
	}

	a := proc("aaa")
	for r := 1; r <= 3; r++ {
		a.Progress(r, 10, "")
	}
	save(a, 3)
	b := proc("bbb")
	if r := resume(b); r != 3 {
		t.Fatalf("resumed after round %d", r)
	}
	save(b, 6)
	c := proc("ccc")
	resume(c)
	want := [][3]any{{1, 3, "aaa"}, {4, 6, "bbb"}, {7, 10, "ccc"}}
	if got := span(c.history(10)); !reflect.DeepEqual(got, want) {
		t.Errorf("history %v, want %v", got, want)
	}
	if h := c.history(10); h[0].CPU != CPUModel() || h[0].Threads <= 0 || h[0].Date == "" {
		t.Errorf("first segment lacks its machine: %+v", h[0])
	}

	// A checkpoint index written before segments (no "segments" field).
	idx := checkpointIndex{Round: 5, Outputs: map[string]artifacts.Digest{}}
	d, _ := s.Put([]byte("x"))
	idx.Outputs["global"] = d
	b2, _ := json.Marshal(idx)
	di, _ := s.Put(b2)
	if err := s.PutRef(checkpointRef(node), di); err != nil {
		t.Fatal(err)
	}
	old := proc("ddd")
	resume(old)
	h := old.history(8)
	if got := span(h); !reflect.DeepEqual(got, [][3]any{{1, 5, ""}, {6, 8, "ddd"}}) || h[0].CPU != "" {
		t.Errorf("history after an old checkpoint: %+v", h)
	}
	if h[0].Text() != "rounds 1–5: not recorded" {
		t.Errorf("text %q", h[0].Text())
	}
}

// segmentsUpTo keeps a consistent prefix of a history and marks the rest unrecorded;
// segmentsOf turns a shorter cached run's provenance into the history of its rounds.
func TestSegmentsUpTo(t *testing.T) {
	h := []Segment{{From: 1, To: 4, Provenance: Provenance{CPU: "A"}}, {From: 5, To: 9, Provenance: Provenance{CPU: "B"}}}
	if got := segmentsUpTo(h, 9); !reflect.DeepEqual(got, h) {
		t.Errorf("whole history: %+v", got)
	}
	if got := segmentsUpTo(h, 12); !reflect.DeepEqual(got, append(h[:2:2], Segment{From: 10, To: 12})) {
		t.Errorf("history short of the resume point: %+v", got)
	}
	if got := segmentsUpTo(h, 6); !reflect.DeepEqual(got, []Segment{h[0], {From: 5, To: 6}}) {
		t.Errorf("history past the resume point: %+v", got)
	}
	gap := []Segment{{From: 1, To: 4, Provenance: Provenance{CPU: "A"}}, {From: 6, To: 9, Provenance: Provenance{CPU: "B"}}}
	if got := segmentsUpTo(gap, 9); !reflect.DeepEqual(got, []Segment{gap[0], {From: 5, To: 9}}) {
		t.Errorf("history with a gap: %+v", got)
	}
	if got := segmentsUpTo(nil, 0); len(got) != 0 {
		t.Errorf("nothing before round 1: %+v", got)
	}
	p := Provenance{CPU: "C", Threads: 2, Seconds: 600, Commit: "0123456789abcdef"}
	got := segmentsOf(p, 100)
	if !reflect.DeepEqual(got, []Segment{{From: 1, To: 100, Provenance: Provenance{CPU: "C", Threads: 2, Seconds: 600, Commit: "0123456789abcdef"}}}) {
		t.Errorf("segmentsOf: %+v", got)
	}
	if txt := got[0].Text(); txt != "rounds 1–100: C, 2 threads, 10m0s, commit 0123456789ab" {
		t.Errorf("text %q", txt)
	}
	p.Segments = h
	if got := segmentsOf(p, 9); !reflect.DeepEqual(got, h) {
		t.Errorf("segmentsOf a resumed result: %+v", got)
	}
}

// A result that ran in two processes reads back with its wall time the total over both,
// each part's beside it; the meta keeps the last process's own.
func TestProvenanceOfTotalsTheParts(t *testing.T) {
	p := Provenance{CPU: "c", Seconds: 31.5, Segments: []Segment{
		{From: 1, To: 20, Provenance: Provenance{CPU: "c", Seconds: 41}},
		{From: 21, To: 25, Provenance: Provenance{CPU: "c", Seconds: 31.5}}}}
	m := map[string]string{}
	p.putMeta(m)
	got, ok := ProvenanceOf(artifacts.Action{Meta: m})
	if !ok || got.Seconds != 72.5 || got.WallParts() != "41.0 + 31.5" || m[metaSeconds] != "31.500" {
		t.Errorf("read back %+v (parts %q), meta seconds %q", got, got.WallParts(), m[metaSeconds])
	}
	one := Provenance{CPU: "c", Seconds: 9}
	if one.TotalSeconds() != 9 || one.WallParts() != "" {
		t.Errorf("one part: %v %q", one.TotalSeconds(), one.WallParts())
	}
}
