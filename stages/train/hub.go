package train

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
)

// Hub trains the clients of several runs in lockstep: runs that train at the same time in one
// process (the executor's runs together, pipeline.Executor.Together) and whose clients'
// steps have the same graph — architecture, input shape, classes, batch size and optimizer —
// hand their plain SGD passes to one engine, whose compiled step has every waiting client of
// every such run on its leading axis (runs × clients). Each run keeps its own rounds,
// aggregation, random streams and results: a client's arithmetic in a lockstep step is the one
// its own Session would do (TestHubRunsMatchAlone: on fpfast, each run's state after every
// round bit for bit as alone). Runs whose steps differ get engines of their own.
//
// A Hub is safe for concurrent use; Close it once every run using it has returned.
type Hub struct {
	ctx     context.Context
	backend string
	// Window is how long an engine waits, with clients ready, for the other runs attached to
	// it (between two of their rounds) before it steps without them; 0: DefaultHubWindow.
	// It changes only which clients share a step, never a result.
	Window time.Duration

	mu      sync.Mutex
	engines map[string]*lockEngine
	closed  bool
}

// DefaultHubWindow is a Hub's default Window: long enough for a run's aggregation between
// two rounds on a GPU host (milliseconds), short beside a round.
const DefaultHubWindow = 50 * time.Millisecond

// NewHub returns a hub training on backend; ctx cancels its steps.
func NewHub(ctx context.Context, backend string) *Hub {
	return &Hub{ctx: ctx, backend: backend, engines: map[string]*lockEngine{}}
}

// engine returns the engine of a step with spec, batch and opt, creating it (and its model)
// on first use.
func (h *Hub) engine(spec model.ModelSpec, batch int, opt model.SGD) (*lockEngine, error) {
	key := fmt.Sprintf("%+v|batch=%d|%+v", spec, batch, opt)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("lockstep hub is closed")
	}
	if e, ok := h.engines[key]; ok {
		return e, nil
	}
	m, err := model.NewModel(h.backend, spec)
	if err != nil {
		return nil, err
	}
	window := h.Window
	if window <= 0 {
		window = DefaultHubWindow
	}
	e := newLockEngine(h.ctx, m, opt, window)
	h.engines[key] = e
	return e, nil
}

// Engines is the number of distinct lockstep steps the hub has built (tests and progress
// read it).
func (h *Hub) Engines() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.engines)
}

// Close releases the engines' models.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, e := range h.engines {
		e.mu.Lock()
		if e.timer != nil {
			e.timer.Stop()
		}
		e.mu.Unlock()
		e.multi.Close()
	}
	h.engines = nil
}

// lockSource is where one run's lockstep groups come from (nil: the run does not train in
// lockstep): a group of its own per spread call on multi (Config.Lockstep), or a view of the
// hub's engine for the step, shared with the other runs of the hub (Config.Hub).
type lockSource struct {
	multi *model.Model

	hub     *Hub
	spec    model.ModelSpec
	batch   int
	tag     *runTag
	excl    sync.Mutex // the run's model, across its spread calls
	engines []*lockEngine
}

// group returns the group a spread call with opt trains in.
func (s *lockSource) group(ctx context.Context, opt model.SGD) (*lockGroup, error) {
	if s.hub == nil {
		return newLockGroup(ctx, s.multi, opt), nil
	}
	e, err := s.hub.engine(s.spec, s.batch, opt)
	if err != nil {
		return nil, err
	}
	if !e.isAttached(s.tag) {
		e.attach(s.tag)
		s.engines = append(s.engines, e)
	}
	return &lockGroup{lockEngine: e, excl: &s.excl, tag: s.tag}, nil
}

// close detaches the run from every engine it used: their generations no longer wait for it.
func (s *lockSource) close() {
	if s == nil {
		return
	}
	for _, e := range s.engines {
		e.detach(s.tag)
	}
	s.engines = nil
	if s.hub == nil && s.multi != nil {
		s.multi.Close()
	}
}

// MaxTogether bounds how many runs train together by default: the runs of a table column's
// seed, or a method's four seeds, fill an H200's lockstep step (docs/gpus.md).
const MaxTogether = 16

// DefaultTogether is how many of runs train at the same time by default on backend, and
// why: one on the CPU backends (whose cores a run fills); on XLA, at most MaxTogether,
// as many as fit both hostMemory (each run's state and data: manifest.MemoryEstimate) and
// deviceMemory (each run's clients in lockstep: parameters, momentum and a batch's
// activations each, manifest.LockstepEstimate), with a fifth of each left free.
func DefaultTogether(runs []*manifest.Run, backend string, hostMemory, deviceMemory float64) (int, string) {
	if !LockstepDefault(backend) {
		return 1, "one run at a time on the CPU backends"
	}
	n := min(MaxTogether, max(1, len(runs)))
	why := fmt.Sprintf("%d runs to train, at most %d", len(runs), MaxTogether)
	var host, dev float64
	for _, r := range runs {
		host = max(host, manifest.MemoryEstimate(r))
		dev = max(dev, manifest.LockstepEstimate(r))
	}
	if host > 0 && hostMemory > 0 {
		if k := int(0.8 * hostMemory / host); k < n {
			n, why = max(1, k), fmt.Sprintf("host memory %s for runs of up to %s", manifest.FormatBytes(hostMemory), manifest.FormatBytes(host))
		}
	}
	if dev > 0 && deviceMemory > 0 {
		if k := int(0.8 * deviceMemory / dev); k < n {
			n, why = max(1, k), fmt.Sprintf("device memory %s for runs of up to %s", manifest.FormatBytes(deviceMemory), manifest.FormatBytes(dev))
		}
	}
	return n, why
}
