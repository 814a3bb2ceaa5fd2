package train

import (
	"context"
	"fmt"
	"runtime"
	"sort"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
	"github.com/fedpipe/fedpipe/stages/rng"
)

// Config is one train stage's input.
type Config struct {
	Run *manifest.Run
	// Method is the run's method as NewRunMethod builds it, when the caller has built it
	// already (the train stage builds it once for all its uses); nil: Run builds it.
	Method  Method
	Data    *data.Dataset
	Assign  *partition.Assignment
	Backend string
	// Resume, when set, continues a run from a checkpointed state.
	Resume *State
	// Checkpoint, when set, is called after every CheckpointEvery rounds.
	Checkpoint func(*State) error
	// Progress, when set, is called after every round.
	Progress func(round, rounds int, note string)
	// Observe, when set, is called after every round (before Progress) with what a live
	// curve needs of it (RoundStats). It must not keep Evals' backing array.
	Observe func(RoundStats)
	// ClientWorkers, when > 0, bounds how many clients train at the same time (1: one
	// after another); 0: GOMAXPROCS for methods that allow it (ConcurrentClients). Results
	// do not depend on it.
	ClientWorkers int
	// Lockstep trains a round's clients in one compiled step (lockGroup) when the method's
	// clients may train at the same time (ConcurrentClients) and the model pads batches: the
	// fast way on a device that runs many small models at once (XLA on a GPU). On fpfast the
	// results are those of training the clients one after another, bit for bit.
	Lockstep bool
	// Hub, when set, trains the run's clients in lockstep with those of the other runs
	// training through it at the same time (Hub); results as with Lockstep.
	Hub *Hub
	// StopAfter, if positive, ends the run after that round (before its evaluation),
	// everything else as configured: Train.Rounds still drives what depends on the total
	// (learning-rate schedules, Local.Rounds), so the rounds run are those of the full run.
	// fedpipe verify --audit recomputes fingerprints this way.
	StopAfter int
}

// ModelSpec returns the gomlx model spec of a run on a dataset.
func ModelSpec(r *manifest.Run, d *data.Dataset) model.ModelSpec {
	spec := model.ModelSpec{Arch: r.Model.Arch, InputShape: d.Shape, NumClasses: d.Classes, InputChannels: r.Model.InputChannels}
	if r.Model.Arch == model.ArchMLP {
		spec.Hidden = r.Model.Hidden
	}
	return spec
}

// Run trains the run's method for its rounds and returns the final state.
func Run(ctx context.Context, cfg Config) (*State, error) {
	r := cfg.Run
	method := cfg.Method
	if method == nil {
		var err error
		if method, err = NewRunMethod(r); err != nil {
			return nil, err
		}
	}
	spec := ModelSpec(r, cfg.Data)
	net, err := model.NewModel(cfg.Backend, spec)
	if err != nil {
		return nil, err
	}
	defer net.Close()
	clients := cfg.Assign.Clients()
	cs := clientSet{d: cfg.Data, a: cfg.Assign}
	aug, err := newAugmenter(r.Train, cfg.Data)
	if err != nil {
		return nil, err
	}

	st := cfg.Resume
	if st == nil {
		init, err := InitialModel(r, spec)
		if err != nil {
			return nil, err
		}
		st = &State{Global: init}
		method.Init(st, clients)
	}
	t := r.Train
	opt := model.SGD{LR: float32(t.LR), Momentum: float32(t.Momentum), WeightDecay: float32(t.WeightDecay)}
	perRound := max(1, int(t.Participation*float64(clients)+1e-9))
	workers := runtime.GOMAXPROCS(0)
	if cfg.ClientWorkers > 0 {
		workers = min(workers, cfg.ClientWorkers)
	}
	pool := newClientPool(cfg.Backend, spec, workers) // fine-tuning for evaluation, always
	defer pool.Close()
	chainer, _ := method.(ClientChains) // not through the BatchNorm wrapper (ClientChains)
	trainPool := pool                   // training, for methods that allow it
	if !concurrent(method) && chainer == nil {
		trainPool = nil
	}
	// lock is where lockstep groups come from (nil: no lockstep training or fine-tuning):
	// the hub shared with other runs, or a step of the run's own; training uses it for
	// methods whose clients may train at the same time.
	var lock, trainLock *lockSource
	switch {
	case !net.PadsBatches():
	case cfg.Hub != nil:
		lock = &lockSource{hub: cfg.Hub, spec: spec, batch: t.BatchSize, tag: &runTag{name: r.Label()}}
	case cfg.Lockstep:
		lock = &lockSource{}
		if lock.multi, err = model.NewModel(cfg.Backend, spec); err != nil {
			return nil, err
		}
	}
	defer lock.close()
	if concurrent(method) || chainer != nil {
		trainLock = lock
	}
	for round := st.Round + 1; round <= t.Rounds; round++ {
		sampled := roundClients(method, r.Seed, round, t.Rounds, clients, perRound, t.Participation)
		uploads := map[int]Upload{}
		sizes := map[int]int{}
		trained := make([]Upload, len(sampled))
		work := make([]Work, len(sampled))
		losses, batches := make([]float64, len(sampled)), make([]int, len(sampled))
		chains, err := roundChains(chainer, round, sampled, &cs)
		if err != nil {
			return nil, err
		}
		// Clients' work grows with their training sets: the largest chains start first.
		size := func(k int) int {
			n := 0
			for _, i := range chains[k] {
				n += cs.trainSize(sampled[i])
			}
			return n
		}
		err = spread(ctx, trainPool, net, trainLock, opt, len(chains), size, func(k int, m *model.Model, group *lockGroup) error {
			for _, i := range chains[k] {
				c := sampled[i]
				l := &Local{model: m, opt: opt, data: cs.train(c), epochs: t.LocalEpochs, batch: t.BatchSize,
					seed: r.Seed, round: round, client: c, rounds: t.Rounds, aug: aug, group: group}
				u, err := method.Train(l, st, c)
				if err != nil {
					return fmt.Errorf("round %d, client %d: %w", round, c, err)
				}
				trained[i], work[i] = u, l.TakeWork(round)
				losses[i], batches[i] = l.takeLoss()
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for i, c := range sampled {
			u := trained[i]
			uploads[c], sizes[c] = u, cs.trainSize(c)
			down, up := ModelBytes(st.Global), ModelBytes(u.Params)
			if cm, ok := optional[Communicator](method); ok {
				down, up = cm.Comm(st, c, u)
			}
			st.Comm = append(st.Comm, Comm{Round: round, Client: c, Down: down, Up: up})
			st.Work = append(st.Work, work[i])
		}
		if len(sampled) > 0 { // a Bernoulli draw may give none: nothing to aggregate
			if err := method.Finish(st, uploads, sizes); err != nil {
				return nil, fmt.Errorf("round %d: %w", round, err)
			}
		}
		evaluates := evaluates(t, round)
		if e, ok := optional[RoundEnder](method); ok {
			err := e.EndRound(st, round, func(c int) *Local {
				return &Local{model: net, opt: opt, data: cs.train(c), epochs: t.LocalEpochs, batch: t.BatchSize,
					seed: r.Seed, round: round, client: c, rounds: t.Rounds, aug: aug, evaluates: evaluates}
			})
			if err != nil {
				return nil, fmt.Errorf("round %d: %w", round, err)
			}
		}
		st.Round = round
		recordFingerprint(st)
		if round == SketchRound {
			st.Sketch = SketchState(st)
		}
		if cfg.StopAfter > 0 && round >= cfg.StopAfter {
			break // an audit's prefix: the rounds after this one are not run (Config.StopAfter)
		}
		note := ""
		var rows []Metric
		if evaluates {
			o := evalOpts(r, opt, method)
			o.aug, o.pool, o.lock = aug, pool, lock
			rows, err = evaluateAll(ctx, net, method, st, cs, round, o)
			if err != nil {
				return nil, err
			}
			st.Metrics = append(st.Metrics, rows...)
			note = fmt.Sprintf("client-mean test acc %.1f%%", 100*MeanAccuracy(rows, "test"))
			if ft := MeanAccuracy(rows, SplitTestFT); ft > 0 {
				note += fmt.Sprintf(", %.1f%% after fine-tuning", 100*ft)
			}
		}
		if cfg.Observe != nil {
			cfg.Observe(roundStats(round, t.Rounds, losses, batches, rows))
		}
		if cfg.Progress != nil {
			cfg.Progress(round, t.Rounds, note)
		}
		if cfg.Checkpoint != nil && t.CheckpointEvery > 0 && round%t.CheckpointEvery == 0 && round < t.Rounds {
			if err := cfg.Checkpoint(st); err != nil {
				return nil, fmt.Errorf("checkpoint after round %d: %w", round, err)
			}
		}
	}
	return st, nil
}

// roundClients draws round's clients, sorted: every client in the last round of a
// LastRoundAll method; each client independently with probability participation for a
// BernoulliSampler (possibly none); otherwise perRound of them, the first of a permutation.
// Each draw has its own stream, so the fixed-size draw is the same whichever methods run.
func roundClients(method Method, seed int64, round, rounds, clients, perRound int, participation float64) []int {
	if l, ok := optional[LastRoundAll](method); ok && l.LastRoundAll() && round == rounds {
		all := make([]int, clients)
		for c := range all {
			all[c] = c
		}
		return all
	}
	if b, ok := optional[BernoulliSampler](method); ok && b.BernoulliSampling() {
		draw := rng.New(seed, round, rng.Global, "sample-bernoulli")
		sampled := []int{}
		for c := range clients {
			if draw.Float64() < participation {
				sampled = append(sampled, c)
			}
		}
		return sampled
	}
	sampled := rng.New(seed, round, rng.Global, "sample").Perm(clients)[:perRound]
	sort.Ints(sampled)
	return sampled
}

// roundChains returns the chains of a round's clients (positions into sampled): the method's
// (ClientChains; nil: none), checked to be a partition, or each client a chain of its own.
func roundChains(chainer ClientChains, round int, sampled []int, cs *clientSet) ([][]int, error) {
	if chainer == nil {
		chains := make([][]int, len(sampled))
		for i := range sampled {
			chains[i] = []int{i}
		}
		return chains, nil
	}
	sizes := make([]int, len(sampled))
	for i, c := range sampled {
		sizes[i] = cs.trainSize(c)
	}
	chains := chainer.Chains(round, sampled, sizes)
	seen := make([]bool, len(sampled))
	n := 0
	for _, chain := range chains {
		for _, i := range chain {
			if i < 0 || i >= len(sampled) || seen[i] {
				return nil, fmt.Errorf("round %d: the method's chains are not a partition of its %d clients (position %d)", round, len(sampled), i)
			}
			seen[i] = true
			n++
		}
	}
	if n != len(sampled) {
		return nil, fmt.Errorf("round %d: the method's chains hold %d of its %d clients", round, n, len(sampled))
	}
	return chains, nil
}

// evaluates reports whether a run evaluates its clients after round: every eval_every
// rounds and after the last.
func evaluates(t manifest.TrainSpec, round int) bool {
	return round == t.Rounds || (t.EvalEvery > 0 && round%t.EvalEvery == 0)
}

// initSeed is the seed of a run's initial model: every client and method of a seed starts
// from the same weights.
func initSeed(r *manifest.Run) uint64 { return rng.Seed(r.Seed, 0, rng.Global, "init") }
