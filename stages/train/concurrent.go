package train

import (
	"context"

	"github.com/fedpipe/fedpipe/model"
)

// clientPool trains (or fine-tunes) several clients at the same time, one per core, each on
// a compiled model of its own whose ops run on a single goroutine: a round's clients are
// independent, and on 2 cores two single-threaded clients did 1.6–1.9× the work of one
// client whose every op is split over both (BenchmarkStepCNN4, one process at -cpu 2 against
// two at -cpu 1). Each client's computation is the one it would have alone, so results are
// bit-identical to training the clients one after another. The models are compiled on first
// use.
type clientPool struct {
	backend string // the single-threaded backend; "": no pool (one client at a time)
	spec    model.ModelSpec
	workers int
	nets    []*model.Model
}

// newClientPool returns a pool of up to workers models of spec on the single-threaded
// variant of backend, or an empty pool (clients one at a time) when workers < 2 or the
// backend cannot run single-threaded.
func newClientPool(backend string, spec model.ModelSpec, workers int) *clientPool {
	single, ok := model.SingleThreaded(backend)
	if workers < 2 || !ok {
		return &clientPool{}
	}
	return &clientPool{backend: single, spec: spec, workers: workers}
}

// concurrent reports whether method's clients may train at the same time: the method
// itself must declare ConcurrentClients (a wrapper such as bnKeep, which swaps the global
// model's BatchNorm entries in and out of the state around each client, does not inherit
// it).
func concurrent(method Method) bool {
	c, ok := method.(ConcurrentClients)
	return ok && c.ConcurrentClients()
}

// models returns the pool's first n models, compiling the missing ones.
func (p *clientPool) models(n int) ([]*model.Model, error) {
	for len(p.nets) < min(n, p.workers) {
		m, err := model.NewModel(p.backend, p.spec)
		if err != nil {
			return nil, err
		}
		p.nets = append(p.nets, m)
	}
	return p.nets[:min(n, p.workers)], nil
}

// Close releases the pool's models.
func (p *clientPool) Close() {
	for _, m := range p.nets {
		m.Close()
	}
	p.nets = nil
}

// run calls fn(i, m) for every i in [0, n) (model.SideBySideOrder): on the pool's workers,
// each with its own model m, largest size(i) first (size estimates a call's work; nil: index
// order), or, without a pool (p nil or empty), one after another with def.
func (p *clientPool) run(ctx context.Context, def *model.Model, n int, size func(i int) int, fn func(i int, m *model.Model) error) error {
	if p == nil || p.backend == "" || n < 2 {
		return model.SideBySide(ctx, []*model.Model{def}, n, fn)
	}
	nets, err := p.models(n)
	if err != nil {
		return err
	}
	var order []int
	if size != nil {
		order = model.LargestFirst(n, size)
	}
	return model.SideBySideOrder(ctx, nets, n, order, fn)
}
