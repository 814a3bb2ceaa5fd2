package live

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

func readJournal(t *testing.T, dir, key string) *Journal {
	t.Helper()
	b, err := os.ReadFile(Path(dir, key))
	if err != nil {
		t.Fatal(err)
	}
	j, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// waitFor polls the journal file until ok accepts it.
func waitFor(t *testing.T, dir, key string, ok func(*Journal) bool) *Journal {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if b, err := os.ReadFile(Path(dir, key)); err == nil {
			if j, err := Decode(b); err == nil && ok(j) {
				return j
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("journal %s never reached the expected state", key)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The journal is readable from the start, gains points while the stage runs, and ends
// finished, interrupted or failed as the stage ended; the remote gets the final state.
func TestPublisherLifecycle(t *testing.T) {
	for _, c := range []struct {
		err   error
		state string
	}{{nil, Finished}, {context.Canceled, Interrupted}, {errors.New("diverged"), Failed}} {
		dir := t.TempDir()
		var mu sync.Mutex
		var remote []byte
		p := Start(Options{Dir: dir, Key: "k1", Name: "train fedavg seed=0", Rounds: 3, LocalEvery: time.Millisecond,
			Remote: func(_ context.Context, b []byte) error {
				mu.Lock()
				remote = append([]byte(nil), b...)
				mu.Unlock()
				return nil
			}})
		j := waitFor(t, dir, "k1", func(j *Journal) bool { return true })
		if j.State != Running || j.Rounds != 3 || j.PID != os.Getpid() || j.Holder == "" {
			t.Fatalf("fresh journal %+v", j)
		}
		loss := 0.5
		p.Round(Point{Round: 1, Clients: 2, TrainLoss: &loss})
		waitFor(t, dir, "k1", func(j *Journal) bool { return len(j.Points) == 1 && *j.Points[0].TrainLoss == 0.5 })
		p.Resumed(1)
		p.Round(Point{Round: 2, Eval: &Eval{TestAccuracy: 0.8}})
		p.End(c.err)
		j = readJournal(t, dir, "k1")
		if j.State != c.state || len(j.Points) != 2 || j.ResumedFrom != 1 {
			t.Fatalf("ended with %v: %+v", c.err, j)
		}
		if c.state == Failed && j.Error != "diverged" {
			t.Fatalf("failed journal's error %q", j.Error)
		}
		mu.Lock()
		rj, err := Decode(remote)
		mu.Unlock()
		if err != nil || rj.State != c.state || rj.Seq != j.Seq {
			t.Fatalf("remote journal %+v (%v), local seq %d", rj, err, j.Seq)
		}
		p.Round(Point{Round: 3}) // after End: ignored
		p.End(nil)
		if j := readJournal(t, dir, "k1"); len(j.Points) != 2 || j.State != c.state {
			t.Fatalf("changed after End: %+v", j)
		}
	}
}

// Recording a round never waits for the writes: a remote that hangs delays nothing but
// End (bounded), and its failure is logged once.
func TestPublisherNeverBlocksTheStage(t *testing.T) {
	dir := t.TempDir()
	release := make(chan struct{})
	var logs []string
	var mu sync.Mutex
	p := Start(Options{Dir: dir, Key: "k", Name: "train x", Rounds: 1000, RemoteEvery: time.Millisecond,
		Remote: func(ctx context.Context, _ []byte) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return errors.New("remote down")
		},
		Logf: func(f string, a ...any) { mu.Lock(); logs = append(logs, fmt.Sprintf(f, a...)); mu.Unlock() }})
	start := time.Now()
	for r := 1; r <= 1000; r++ {
		p.Round(Point{Round: r})
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("1000 rounds took %v to record", d)
	}
	close(release)
	p.End(nil)
	if j := readJournal(t, dir, "k"); j.State != Finished || j.Last().Round != 1000 {
		t.Fatalf("journal %s at round %d", j.State, j.Last().Round)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logs) != 1 {
		t.Fatalf("logged %d times: %q", len(logs), logs)
	}
}

func TestNilPublisher(t *testing.T) {
	var p *Publisher
	p.Round(Point{})
	p.Resumed(1)
	p.End(nil)
}

// A stage resumed from a checkpoint keeps the interrupted run's points up to it, and its
// wall time goes on from theirs.
func TestPublisherResumeKeepsCurve(t *testing.T) {
	dir := t.TempDir()
	p := Start(Options{Dir: dir, Key: "k", Name: "train x", Rounds: 10})
	for r := 1; r <= 6; r++ {
		p.Round(Point{Round: r})
	}
	p.End(context.Canceled)
	before := readJournal(t, dir, "k")
	p = Start(Options{Dir: dir, Key: "k", Name: "train x", Rounds: 10})
	p.Resumed(4)
	p.Round(Point{Round: 5})
	p.End(nil)
	j := readJournal(t, dir, "k")
	if len(j.Points) != 5 || j.Points[3].Round != 4 || j.Last().Round != 5 || j.ResumedFrom != 4 {
		t.Fatalf("resumed journal %+v", j.Points)
	}
	if j.Last().Seconds < before.Points[3].Seconds {
		t.Fatalf("round 5 at %v s, before round 4's %v s", j.Last().Seconds, before.Points[3].Seconds)
	}
}

// BenchmarkRoundAndWrite is the work publishing adds to a training round at its worst:
// record a round with an evaluation, then encode and write the whole journal of a 400-round
// run to the store (a run writes at most every LocalEvery, 0.2 s, so at most once a round
// of the FedOBP-FMNIST cell, about 6 s). Compare its ns/op with a round's seconds.
func BenchmarkRoundAndWrite(b *testing.B) {
	p := Start(Options{Dir: b.TempDir(), Key: "k", Name: "train fedobp seed=0", Rounds: 400, LocalEvery: time.Hour})
	defer p.End(nil)
	loss, ft := 0.31, 0.97
	point := func(r int) Point {
		return Point{Round: r, Clients: 10, TrainLoss: &loss,
			Eval: &Eval{TestAccuracy: 0.95, TestLoss: 0.2, TestFTAccuracy: &ft}}
	}
	for r := 1; r <= 400; r++ {
		p.Round(point(r))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Round(point(400))
		data, _ := p.take()
		p.writeLocal(data)
	}
}
