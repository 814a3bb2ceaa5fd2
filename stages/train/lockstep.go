package train

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
)

// Lockstep training: a round's clients train in one compiled step (model.MultiSession), with
// the clients as its leading axis, where a device runs many small identical models at once
// (XLA on a GPU) far faster than one after another.
//
// Methods need no change. Each client runs its method's Train on a goroutine of its own, as
// on the CPU pool; a Local bound to a lockGroup hands the batches of its plain SGD passes
// (Fit with no mask, no proximal term and no carried momentum, at the group's optimizer) to the
// group instead of stepping a Session. The group runs a "generation" (one MultiSession) over
// the clients waiting to train, once no client is busy elsewhere; each step of it advances
// every member that has handed in a batch, and a member whose passes are over idles, exactly
// (its parameters and momentum stay as they are), until the last member is done. Everything
// else a Local does with the model (masked or proximal passes, Fisher information,
// gradients) runs on the shared model one client at a time (lockGroup.exclusive).
//
// Each client's arithmetic is the one its own Session would do, so on fpfast the results are
// bit-identical to training the clients one after another (TestLockGroupMatchesSessions,
// and TestConcurrentClientsMatchSequential for every method); on XLA they are its own.

// lockstepSteps counts lockstep steps run in this process (tests read it).
var lockstepSteps atomic.Int64

// sharedSteps counts the lockstep steps run in this process whose clients came from more
// than one run (a Hub's engine; tests and SharedSteps read it).
var sharedSteps atomic.Int64

// SharedSteps is the number of lockstep steps this process ran with the clients of more than
// one run: how often runs training together shared a compiled step.
func SharedSteps() int64 { return sharedSteps.Load() }

// lockGroup is one run's view of a lockEngine: the clients of one of its spread calls train
// in lockstep through it, and everything else they do with the run's shared model takes
// turns on excl. A group of its own per round (newLockGroup) or one of a Hub's engines,
// shared with the other runs training beside it, behaves the same for the run.
type lockGroup struct {
	*lockEngine
	excl *sync.Mutex // the run's shared model, for everything but lockstep passes
	tag  *runTag     // the run, for a shared engine's arrivals (nil: an engine of its own)
}

// lockEngine runs the generations of one compiled lockstep step: the clients of one round,
// or of every run sharing it through a Hub.
type lockEngine struct {
	ctx   context.Context
	multi *model.Model // the MultiSession's model (its graphs are compiled once, kept)
	opt   model.SGD    // the optimizer of every member (a pass with another runs alone)

	mu      sync.Mutex
	cond    *sync.Cond
	live    int         // client goroutines running
	waiting []*lockJoin // clients that asked to train and are not yet in a generation
	gen     *generation // the running generation (nil: none)
	err     error       // a failed step: every member fails with it

	// A Hub's engine waits, before a generation, up to window for the runs attached to it
	// (attached) to have clients here (runs, live goroutines by run): a run between two
	// rounds (aggregating) would otherwise miss every other generation. since is when the
	// waiting clients could first have started; timer wakes the engine at the window's end.
	window   time.Duration
	attached map[*runTag]bool
	runs     map[*runTag]int
	since    time.Time
	timer    *time.Timer
}

// runTag identifies one run attached to a Hub.
type runTag struct{ name string }

// lockJoin is one client's request to train from params.
type lockJoin struct {
	params tensor.List
	tag    *runTag
	gen    *generation
	slot   int
}

// generation is one MultiSession over the members it started with.
type generation struct {
	ms      *model.MultiSession
	active  int         // members still handing in batches
	pending int         // active members that have not handed in this step's batch
	x       [][]float32 // this step's batches by slot (nil: none)
	y       [][]int32
	losses  []float32 // the last step's losses by slot
	step    int       // steps run so far
	runs    int       // distinct runs among the members (a Hub's engine; else 1)
	result  []tensor.List
	over    bool
	err     error
}

// newLockGroup returns a group of its own training with opt on multi, a model that pads
// batches.
func newLockGroup(ctx context.Context, multi *model.Model, opt model.SGD) *lockGroup {
	return &lockGroup{lockEngine: newLockEngine(ctx, multi, opt, 0), excl: new(sync.Mutex)}
}

// newLockEngine returns an engine training with opt on multi; window > 0 makes it wait for
// attached runs (see lockEngine).
func newLockEngine(ctx context.Context, multi *model.Model, opt model.SGD, window time.Duration) *lockEngine {
	e := &lockEngine{ctx: ctx, multi: multi, opt: opt, window: window, attached: map[*runTag]bool{}, runs: map[*runTag]int{}}
	e.cond = sync.NewCond(&e.mu)
	return e
}

// accepts reports whether a pass with this optimizer, mask and proximal weight can run in
// lockstep.
func (g *lockGroup) accepts(opt model.SGD, mask tensor.List, mu float32) bool {
	return g != nil && mask == nil && mu == 0 && opt == g.opt
}

// exclusive runs fn with the shared model to itself.
func (g *lockGroup) exclusive(fn func() error) error {
	if g == nil {
		return fn()
	}
	g.excl.Lock()
	defer g.excl.Unlock()
	return fn()
}

// run calls fn(i) for every i in [0, n), each on its own goroutine, and returns the lowest
// i's error (after every call has returned), as clientPool.run does.
func (g *lockGroup) run(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	g.mu.Lock()
	g.live += n
	if g.tag != nil {
		g.runs[g.tag] += n
	}
	g.mu.Unlock()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer g.exit()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// exit records that a client goroutine is over: a generation may start without it.
func (g *lockGroup) exit() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.live--
	if g.tag != nil {
		if g.runs[g.tag]--; g.runs[g.tag] == 0 {
			delete(g.runs, g.tag)
		}
	}
	g.maybeStart()
}

// maybeStart starts a generation over the waiting clients when none runs and no client is
// busy elsewhere (every live client is waiting), and, on a Hub's engine, every attached run
// has clients here or the window is over. Called with g.mu held.
func (g *lockEngine) maybeStart() {
	if g.gen != nil || len(g.waiting) == 0 || len(g.waiting) < g.live || g.err != nil {
		return
	}
	if g.window > 0 && !g.allArrived() {
		if g.since.IsZero() {
			g.since = time.Now()
		}
		if wait := g.window - time.Since(g.since); wait > 0 {
			if g.timer == nil {
				g.timer = time.AfterFunc(wait, func() {
					g.mu.Lock()
					defer g.mu.Unlock()
					g.timer = nil
					g.maybeStart()
				})
			}
			return
		}
	}
	g.since = time.Time{}
	members := g.waiting
	g.waiting = nil
	params := make([]tensor.List, len(members))
	for i, j := range members {
		params[i] = j.params
	}
	gen := &generation{active: len(members), pending: len(members),
		x: make([][]float32, len(members)), y: make([][]int32, len(members))}
	tags := map[*runTag]bool{}
	for _, j := range members {
		tags[j.tag] = true
	}
	gen.runs = len(tags)
	// A generation that cannot start hands its error to its members and is over at once.
	gen.ms, gen.err = g.multi.NewMultiSession(params, g.opt)
	for i, j := range members {
		j.gen, j.slot = gen, i
	}
	if gen.err == nil {
		g.gen = gen
	}
	g.cond.Broadcast()
}

// train runs passes (which hands each batch to step) for a client starting from params, in
// the next generation, and returns the client's parameters after them.
func (g *lockGroup) train(params tensor.List, passes func(step func(x []float32, y []int32) (float32, error)) error) (tensor.List, error) {
	return g.lockEngine.train(g.tag, params, passes)
}

// train is lockGroup.train for run tag.
func (g *lockEngine) train(tag *runTag, params tensor.List, passes func(step func(x []float32, y []int32) (float32, error)) error) (tensor.List, error) {
	j := &lockJoin{params: params, tag: tag}
	g.mu.Lock()
	g.waiting = append(g.waiting, j)
	g.maybeStart()
	for j.gen == nil && g.err == nil {
		g.cond.Wait()
	}
	if j.gen == nil {
		err := g.err
		g.removeWaiting(j)
		g.mu.Unlock()
		return nil, err
	}
	gen, slot := j.gen, j.slot
	if gen.err != nil {
		g.mu.Unlock()
		return nil, gen.err
	}
	g.mu.Unlock()
	err := passes(func(x []float32, y []int32) (float32, error) { return g.step(gen, slot, x, y) })
	return g.leave(gen, slot, err)
}

// allArrived reports whether every attached run has clients in the engine. Called with g.mu
// held.
func (g *lockEngine) allArrived() bool {
	for tag := range g.attached {
		if g.runs[tag] == 0 {
			return false
		}
	}
	return true
}

// attach records that run tag trains through the engine until detach: a generation waits
// up to the window for it.
func (g *lockEngine) attach(tag *runTag) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.attached[tag] = true
}

// isAttached reports whether run tag is attached.
func (g *lockEngine) isAttached(tag *runTag) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.attached[tag]
}

// detach records that run tag is over: no generation waits for it any more.
func (g *lockEngine) detach(tag *runTag) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.attached, tag)
	g.maybeStart()
}

// removeWaiting drops j from the waiting clients. Called with g.mu held.
func (g *lockEngine) removeWaiting(j *lockJoin) {
	for i, w := range g.waiting {
		if w == j {
			g.waiting = append(g.waiting[:i], g.waiting[i+1:]...)
			return
		}
	}
}

// step hands in slot's batch and waits until the step that takes it has run; it returns the
// slot's loss. The batch is read during the call only.
func (g *lockEngine) step(gen *generation, slot int, x []float32, y []int32) (float32, error) {
	if len(y) == 0 {
		return 0, errors.New("lockstep training step with an empty batch")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if gen.err != nil {
		return 0, gen.err
	}
	gen.x[slot], gen.y[slot] = x, y
	gen.pending--
	at := gen.step
	g.maybeStep(gen)
	for gen.step == at && gen.err == nil {
		g.cond.Wait()
	}
	if gen.err != nil {
		return 0, gen.err
	}
	return gen.losses[slot], nil
}

// maybeStep runs the generation's step once every active member has handed in its batch.
// Called with g.mu held; the step runs under it (every member is waiting for it anyway).
func (g *lockEngine) maybeStep(gen *generation) {
	if gen.pending > 0 || gen.active == 0 || gen.err != nil {
		return
	}
	if err := g.ctx.Err(); err != nil {
		g.fail(gen, err)
		return
	}
	losses, err := gen.ms.Step(gen.x, gen.y)
	if err != nil {
		g.fail(gen, err)
		return
	}
	gen.losses = losses
	gen.step++
	lockstepSteps.Add(1)
	if gen.runs > 1 {
		sharedSteps.Add(1)
	}
	gen.pending = gen.active
	clear(gen.x)
	clear(gen.y)
	g.cond.Broadcast()
}

// fail ends a generation with err. Called with g.mu held.
func (g *lockEngine) fail(gen *generation, err error) {
	gen.err = fmt.Errorf("lockstep training: %w", err)
	g.err = gen.err
	g.cond.Broadcast()
}

// leave records that slot's passes are over (with err if they failed) and waits for the
// generation's end; it returns slot's parameters.
func (g *lockEngine) leave(gen *generation, slot int, passErr error) (tensor.List, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gen.err == nil {
		gen.active--
		gen.pending--
		if gen.active == 0 {
			gen.result, gen.err = gen.ms.Params()
			gen.over = true
		} else {
			g.maybeStep(gen)
		}
	}
	for !gen.over && gen.err == nil {
		g.cond.Wait()
	}
	if g.gen == gen { // the first member out of an ended generation closes it
		gen.ms.Close()
		gen.over = true
		g.gen = nil
		g.maybeStart()
		g.cond.Broadcast()
	}
	if passErr != nil {
		return nil, passErr
	}
	if gen.err != nil {
		return nil, gen.err
	}
	return gen.result[slot], nil
}

// spread calls fn(i, m, group) for every i in [0, n): with a lockstep source, every call at
// once, in one lockGroup training in lockstep with opt (m is def, shared); else on pool
// (group nil; size orders the calls as clientPool.run does).
func spread(ctx context.Context, pool *clientPool, def *model.Model, lock *lockSource, opt model.SGD, n int, size func(int) int,
	fn func(i int, m *model.Model, group *lockGroup) error) error {
	if lock != nil {
		group, err := lock.group(ctx, opt)
		if err != nil {
			return err
		}
		return group.run(n, func(i int) error { return fn(i, def, group) })
	}
	return pool.run(ctx, def, n, size, func(i int, m *model.Model) error { return fn(i, m, nil) })
}
