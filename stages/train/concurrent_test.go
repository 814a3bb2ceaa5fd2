package train

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/model"
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
