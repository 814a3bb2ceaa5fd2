package train

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/partition"
)

func TestClientPool(t *testing.T) {
	spec := model.ModelSpec{Arch: model.ArchLogReg, InputShape: []int{4}, NumClasses: 3}
	if p := newClientPool(model.OracleBackend, spec, 3); p.backend != "" {
		t.Fatalf("fpcpu pool on %q; want none (it cannot run single-threaded)", p.backend)
	}
	p := newClientPool("", spec, 2)
	defer p.Close()
	if nets, err := p.models(5); err != nil || len(nets) != 2 {
		t.Fatalf("fpfast pool: %d models, %v; want 2", len(nets), err)
	}

	// Two clients run at the same time: each waits until both have started.
	var started sync.WaitGroup
	started.Add(2)
	err := p.run(context.Background(), nil, 2, nil, func(i int, m *model.Model) error {
		if m == nil {
			return errors.New("no model")
		}
		started.Done()
		done := make(chan struct{})
		go func() { started.Wait(); close(done) }()
		select {
		case <-done:
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("the other client never started")
		}
	})
	if err != nil {
		t.Fatal(err)
	}

	// The lowest failing client's error wins; a panic becomes an error.
	err = p.run(context.Background(), nil, 5, func(i int) int { return i % 3 }, func(i int, m *model.Model) error {
		switch i {
		case 1:
			panic("boom")
		case 3:
			return errors.New("three")
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "panic: boom") {
		t.Errorf("error %v, want client 1's panic", err)
	}

	// A cancelled context starts nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	if err := p.run(ctx, nil, 4, nil, func(int, *model.Model) error { calls++; return nil }); !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("cancelled: %v after %d calls", err, calls)
	}
}

// fixedChains is a ClientChains returning the same chains every round.
type fixedChains [][]int

func (f fixedChains) Chains(int, []int, []int) [][]int { return f }

func TestRoundChains(t *testing.T) {
	cs := &clientSet{a: &partition.Assignment{Train: [][]int{{0}, {1, 2}, {3, 4, 5}, {6}}}}
	sampled := []int{0, 2, 3}
	got, err := roundChains(nil, 1, sampled, cs)
	if err != nil || !reflect.DeepEqual(got, [][]int{{0}, {1}, {2}}) {
		t.Errorf("no chains: %v, %v; want each client alone", got, err)
	}
	if got, err := roundChains(fixedChains{{2, 0}, {1}}, 1, sampled, cs); err != nil || len(got) != 2 {
		t.Errorf("a partition: %v, %v", got, err)
	}
	for _, bad := range []fixedChains{{{0, 1}}, {{0, 1}, {1, 2}}, {{0, 1, 2, 3}}, {{-1, 0, 1, 2}}} {
		if _, err := roundChains(bad, 7, sampled, cs); err == nil || !strings.Contains(err.Error(), "round 7") {
			t.Errorf("chains %v of 3 clients: error %v, want one naming the round", bad, err)
		}
	}
}
