package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
)

// Runs together: with Executor.Together > 1, the stages of a plan run as soon as their inputs
// are done, up to Together at a time, each on a goroutine of its own. What each stage
// computes, stores and records is exactly what it would alone (its own context, checkpoints,
// progress journal and result); only the order in which stages start and end differs. On an
// XLA backend the train stages running at the same time share one lockstep step
// (stages/train's Hub), which is what makes a sweep's runs fill a GPU.

// executeTogether is execute with up to e.Together stages running at the same time. A
// stage whose input is a partial result (completeInputs recomputes that input) would have
// its input recomputed by every stage that needs it, so such a plan runs one stage at a
// time, as execute does.
func (e *Executor) executeTogether(ctx context.Context, plan []PlanEntry, g *Graph) ([]StageResult, error) {
	if partialInputs(plan) {
		return e.execute(ctx, plan, g)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	progress := &syncProgress{p: e.Progress}
	saved := e.Progress
	e.Progress = progress
	defer func() { e.Progress = saved }()

	var mu sync.Mutex // actions, results, ran, started, first
	actions := map[*Node]artifacts.Action{}
	results := make([]StageResult, len(plan))
	ran := make([]bool, len(plan))
	var first error // the first stage to fail
	done := map[*Node]chan struct{}{}
	toRun := 0
	for i, p := range plan {
		n := p.Node
		if p.State == StateCached {
			actions[n] = p.action
			results[i] = StageResult{Kind: n.Kind, Name: n.Name, Key: n.Key.String(), State: StateCached,
				Outputs: digestStrings(p.action.Outputs)}
			ran[i] = true
			continue
		}
		toRun++
		done[n] = make(chan struct{})
	}
	slots := make(chan struct{}, e.Together)
	started := 0
	var wg sync.WaitGroup
	for i, p := range plan {
		if p.State == StateCached {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := p.Node
			defer close(done[n])
			for _, in := range n.Inputs {
				if ch, ok := done[in]; ok {
					<-ch
				}
			}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-slots }()
			mu.Lock()
			local := make(map[*Node]artifacts.Action, len(actions)+1)
			missing := false
			for _, in := range n.Inputs {
				if _, ok := actions[in]; !ok {
					missing = true // an input failed or was cancelled
				}
			}
			for k, v := range actions {
				local[k] = v
			}
			started++
			index := started
			mu.Unlock()
			if missing || ctx.Err() != nil {
				return
			}
			res, err := e.runOne(ctx, g, p, local, index, toRun)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = err
				}
				cancel() // the first failure stops the others (their checkpoints are saved)
				return
			}
			actions[n] = local[n]
			results[i], ran[i] = res, true
		}()
	}
	wg.Wait()
	// The results in plan order, up to the first stage that did not finish; the error is the
	// first failure (those of stages it cancelled follow from it), else the context's.
	out := make([]StageResult, 0, len(plan))
	for i := range plan {
		if !ran[i] {
			break
		}
		out = append(out, results[i])
	}
	if first != nil {
		return out, first
	}
	if len(out) < len(plan) {
		return out, ctx.Err()
	}
	return out, nil
}

// runOne runs the planned stage p, whose inputs' actions are in actions (it adds its own):
// fetched from the remote when it has it, else run.
func (e *Executor) runOne(ctx context.Context, g *Graph, p PlanEntry, actions map[*Node]artifacts.Action, index, total int) (StageResult, error) {
	if err := ctx.Err(); err != nil {
		return StageResult{}, err
	}
	reason := p.Reason
	if res, ok, err := e.fetch(ctx, p.Node, actions, &reason); err != nil || ok {
		return res, err
	}
	return e.runStage(ctx, g, p.Node, reason, actions, index, total)
}

// partialInputs reports whether a stage of plan to run has an input whose cached result is
// partial.
func partialInputs(plan []PlanEntry) bool {
	cached := map[*Node]artifacts.Action{}
	for _, p := range plan {
		if p.State == StateCached {
			cached[p.Node] = p.action
		}
	}
	for _, p := range plan {
		if p.State == StateCached {
			continue
		}
		for _, in := range p.Node.Inputs {
			if a, ok := cached[in]; ok && remote.Partial(a) {
				return true
			}
		}
	}
	return false
}

// syncProgress serializes a Progress for stages running at the same time.
type syncProgress struct {
	mu sync.Mutex
	p  Progress
}

func (s *syncProgress) StageStart(index, total int, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.StageStart(index, total, name)
}

func (s *syncProgress) Step(name string, done, total int, note string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.Step(name, done, total, note)
}

func (s *syncProgress) StageEnd(name string, d time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.StageEnd(name, d, err)
}

func (s *syncProgress) Logf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p.Logf(format, args...)
}
