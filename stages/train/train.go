// Package train is the federated simulator: N clients, a sampled fraction per round, local
// SGD epochs, and a method that decides what clients start from and what the server does
// with their models. It sees parameters only as plain tensors; gomlx does the numerics.
package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
	"github.com/fedpipe/fedpipe/stages/rng"
)

// Metric is one row of the per-round metrics table (stored as results.Metric).
type Metric = results.Metric

// SplitTestFT labels the metric rows of a test split evaluated after fine-tuning (only for
// runs that fine-tune; "test" rows are always the model the method holds).
const SplitTestFT = results.SplitTestFT

// State is everything a federated run carries from one round to the next. Together with
// the run's seed it determines the rest of the run, so it is what a checkpoint stores.
type State struct {
	// Round is the last completed round (0 before the first).
	Round int
	// Global is the server's model.
	Global tensor.List
	// Personal holds each client's own model for methods that keep one (nil otherwise).
	Personal []tensor.List
	// Masks holds each client's 0/1 personalization mask (1 = personalized) for methods
	// that select entries (nil otherwise; a nil entry means nothing is personalized).
	Masks []tensor.List
	// Method is the method's own state beyond Global, Personal and Masks (FedSelect's
	// growth anchors, FedOBP's score averages, APFL's mixing weights): a typed value the
	// method's Init sets, nil for methods that keep none. See MethodState.
	Method MethodState
	// BN holds each client's own BatchNorm tensors when the run keeps them out of
	// aggregation (see NewRunMethod); nil otherwise.
	BN      []tensor.List
	Metrics []Metric
	// Selection records, per round and sampled client, the personalized fraction per
	// tensor.
	Selection []Selection
	// Comm records, per round and sampled client, the bytes it received and sent.
	Comm []Comm
	// Work records, per round and client that trained, the samples it processed and the
	// training FLOPs they cost (see Local.Work).
	Work []Work
	// Fingerprints holds the digest of the state after each round (StateDigest), stored
	// as the train stage's "fingerprints" output so that an audit can recompute them.
	Fingerprints []Fingerprint
}

// Work is one client's training computation in one round (stored as results.Work).
type Work = results.Work

// Comm is one client's communication in one round, counting 4 bytes per float32 value
// and one bit per mask entry sent (stored as results.Comm).
type Comm = results.Comm

// ModelBytes is the size of a model as float32 values: what sending it costs.
func ModelBytes(l tensor.List) int64 { return 4 * int64(l.NumElements()) }

// Selection is one row of the personalized-fraction table (stored as results.Selection).
type Selection = results.Selection

// Upload is what a client returns from a round, for the method's Finish: its trained
// model and whatever else the method carries from client to server.
type Upload struct {
	Params tensor.List
	// NextMask is a 0/1 mask beside the model: for methods that select entries, the mask
	// the client uses from the next round on; for the others that send one, the entries
	// the upload covers (FedPer's shared part, LotteryFL's subnetwork, DM-PFL's mask).
	NextMask tensor.List
	// Personal is a client-side model trained beside the upload (Ditto, APFL, pFedFDA);
	// never sent.
	Personal tensor.List
	// Stats are statistics sent beside the model (pFedFDA's Gaussian estimates, FedPAC's
	// centroids and collaboration statistics, FLOCO's update signature).
	Stats tensor.List
}

// Method is a federated algorithm: how a client trains in a round, and what the server
// does with the uploads.
type Method interface {
	// Init prepares the state after the global model is initialized.
	Init(st *State, clients int)
	// Train runs client c's part of the round.
	Train(l *Local, st *State, c int) (Upload, error)
	// Finish folds the round's uploads (by client, with training-set sizes) into the state.
	Finish(st *State, uploads map[int]Upload, sizes map[int]int) error
	// EvalModel returns the model client c is evaluated with.
	EvalModel(st *State, c int) tensor.List
}

// clientData is one client's samples, copied out of the dataset (clientSet.train, .test).
type clientData struct {
	trainX, testX []float32
	trainY, testY []int32
}

// clientSet gives each client's samples, gathered from the dataset when they are needed and
// dropped after: a round copies only its participants' training sets and an evaluation one
// client's splits at a time, where keeping every client's copy would hold the dataset twice
// for the whole run (209 MB more for FMNIST, the largest entry of a 100-client run's heap
// profile). The dataset is only read, so clients may be gathered side by side.
type clientSet struct {
	d *data.Dataset
	a *partition.Assignment
}

// n is the number of clients.
func (cs clientSet) n() int { return cs.a.Clients() }

// trainSize is client c's number of training samples.
func (cs clientSet) trainSize(c int) int { return len(cs.a.Train[c]) }

// train returns client c's training split (its test split left empty).
func (cs clientSet) train(c int) clientData {
	var cd clientData
	cd.trainX, cd.trainY = cs.d.Gather(cs.a.Train[c])
	return cd
}

// test returns client c's test split.
func (cs clientSet) test(c int) ([]float32, []int32) { return cs.d.Gather(cs.a.Test[c]) }

// Config is one train stage's input.
type Config struct {
	Run     *manifest.Run
	Data    *data.Dataset
	Assign  *partition.Assignment
	Backend string
	// Resume, when set, continues a run from a checkpointed state.
	Resume *State
	// Checkpoint, when set, is called after every CheckpointEvery rounds.
	Checkpoint func(*State) error
	// Progress, when set, is called after every round.
	Progress func(round, rounds int, note string)
	// ClientWorkers, when > 0, bounds how many clients train at the same time (1: one
	// after another); 0: GOMAXPROCS for methods that allow it (ConcurrentClients). Results
	// do not depend on it.
	ClientWorkers int
	// Lockstep trains a round's clients in one compiled step (lockGroup) when the method's
	// clients may train at the same time (ConcurrentClients) and the model pads batches: the
	// fast way on a device that runs many small models at once (XLA on a GPU). On fpfast the
	// results are those of training the clients one after another, bit for bit.
	Lockstep bool
	// StopAfter, if positive, ends the run after that round (before its evaluation),
	// everything else as configured: Train.Rounds still drives what depends on the total
	// (learning-rate schedules, Local.Rounds), so the rounds run are those of the full run.
	// fedpipe verify --audit recomputes fingerprints this way.
	StopAfter int
}

// LockstepDefault says whether runs on backend (as model.ResolveBackend returns it) train
// in lockstep: on XLA, always (the results on XLA are those of lockstep training).
func LockstepDefault(backend string) bool { return strings.HasPrefix(backend, "xla:") }

// ModelSpec returns the gomlx model spec of a run on a dataset.
func ModelSpec(r *manifest.Run, d *data.Dataset) model.ModelSpec {
	spec := model.ModelSpec{Arch: r.Model.Arch, InputShape: d.Shape, NumClasses: d.Classes, InputChannels: r.Model.InputChannels}
	if r.Model.Arch == "mlp" {
		spec.Hidden = r.Model.Hidden
	}
	return spec
}

// Run trains the run's method for its rounds and returns the final state.
func Run(ctx context.Context, cfg Config) (*State, error) {
	r := cfg.Run
	method, err := NewRunMethod(r)
	if err != nil {
		return nil, err
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
	trainPool := pool // training, for methods that allow it
	if !concurrent(method) {
		trainPool = nil
	}
	// multi holds the lockstep step's graphs (nil: no lockstep training or fine-tuning);
	// training uses it for methods whose clients may train at the same time.
	var multi, trainMulti *model.Model
	if cfg.Lockstep && net.PadsBatches() {
		if multi, err = model.NewModel(cfg.Backend, spec); err != nil {
			return nil, err
		}
		defer multi.Close()
	}
	if concurrent(method) {
		trainMulti = multi
	}
	for round := st.Round + 1; round <= t.Rounds; round++ {
		sampled := rng.New(r.Seed, round, rng.Global, "sample").Perm(clients)[:perRound]
		sort.Ints(sampled)
		uploads := map[int]Upload{}
		sizes := map[int]int{}
		trained := make([]Upload, len(sampled))
		work := make([]Work, len(sampled))
		// Clients' work grows with their training sets: the largest start first.
		size := func(i int) int { return cs.trainSize(sampled[i]) }
		err := spread(ctx, trainPool, net, trainMulti, opt, len(sampled), size, func(i int, m *model.Model, group *lockGroup) error {
			c := sampled[i]
			l := &Local{model: m, opt: opt, data: cs.train(c), epochs: t.LocalEpochs, batch: t.BatchSize,
				seed: r.Seed, round: round, client: c, rounds: t.Rounds, aug: aug, group: group}
			u, err := method.Train(l, st, c)
			if err != nil {
				return fmt.Errorf("round %d, client %d: %w", round, c, err)
			}
			trained[i], work[i] = u, l.TakeWork(round)
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
		if err := method.Finish(st, uploads, sizes); err != nil {
			return nil, fmt.Errorf("round %d: %w", round, err)
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
		if cfg.StopAfter > 0 && round >= cfg.StopAfter {
			break // an audit's prefix: the rounds after this one are not run (Config.StopAfter)
		}
		note := ""
		if evaluates {
			o := evalOpts(r, opt, method)
			o.aug, o.pool, o.multi = aug, pool, multi
			rows, err := evaluateAll(ctx, net, method, st, cs, round, o)
			if err != nil {
				return nil, err
			}
			st.Metrics = append(st.Metrics, rows...)
			note = fmt.Sprintf("test acc %.1f%%", 100*MeanAccuracy(rows, "test"))
			if ft := MeanAccuracy(rows, SplitTestFT); ft > 0 {
				note += fmt.Sprintf(", %.1f%% after fine-tuning", 100*ft)
			}
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

// evaluates reports whether a run evaluates its clients after round: every eval_every
// rounds and after the last.
func evaluates(t manifest.TrainSpec, round int) bool {
	return round == t.Rounds || (t.EvalEvery > 0 && round%t.EvalEvery == 0)
}

// Local gives a method what it needs to train one client in one round.
type Local struct {
	model  *model.Model
	opt    model.SGD
	data   clientData
	epochs int
	batch  int
	seed   int64
	round  int
	client int
	aug    *augmenter // nil: no augmentation
	rounds int        // the run's total rounds
	// group trains this client in lockstep with the round's others (nil: on its own).
	group *lockGroup
	// evaluates: every client is evaluated right after this round (see Evaluates).
	evaluates bool
	// samples and flops count the training work done through this Local.
	samples int64
	flops   float64
	// frozenBN trains with BatchNorm frozen (model.ModelSpec.FrozenBN; see WithFrozenBN).
	frozenBN bool
	// parent is the Local a WithFrozenBN copy counts its work on (nil: itself).
	parent *Local
}

// WithFrozenBN returns a Local whose Train and TrainProx train with BatchNorm as in
// evaluation — the running statistics normalize and stay unchanged (model.Model.FrozenBN)
// — and the receiver unchanged; work it does is counted on l. Such passes run on their
// own, never in lockstep. Without BatchNorm it trains exactly as l.
func (l *Local) WithFrozenBN() *Local {
	return &Local{model: l.model, opt: l.opt, data: l.data, epochs: l.epochs, batch: l.batch, seed: l.seed,
		round: l.round, client: l.client, aug: l.aug, rounds: l.rounds, group: l.group, frozenBN: true, parent: l}
}

// LocalConfig is what a Local is made of (NewLocal): the run's model and settings and one
// client's training data in one round.
type LocalConfig struct {
	Model     *model.Model
	Optimizer model.SGD
	// TrainX and TrainY are the client's training inputs (sample after sample) and labels.
	TrainX            []float32
	TrainY            []int32
	Epochs, BatchSize int
	Seed              int64
	Round, Rounds     int
	Client            int
}

// NewLocal returns the Local of one client in one round, without augmentation: for
// methods' tests and tools that train a client outside Run.
func NewLocal(c LocalConfig) *Local {
	return &Local{model: c.Model, opt: c.Optimizer, data: clientData{trainX: c.TrainX, trainY: c.TrainY},
		epochs: c.Epochs, batch: c.BatchSize, seed: c.Seed, round: c.Round, client: c.Client, rounds: c.Rounds}
}

// Model is the compiled model the client trains with (not safe to keep after the round).
func (l *Local) Model() *model.Model { return l.model }

// Optimizer is the run's SGD settings.
func (l *Local) Optimizer() model.SGD { return l.opt }

// TrainX is the client's training inputs, sample after sample (TrainSize of them).
func (l *Local) TrainX() []float32 { return l.data.trainX }

// TrainY is the client's training labels.
func (l *Local) TrainY() []int32 { return l.data.trainY }

// BatchSize is the run's mini-batch size.
func (l *Local) BatchSize() int { return l.batch }

// Seed is the run's seed, the root of every random stream (stages/rng).
func (l *Local) Seed() int64 { return l.seed }

// Client is the client this Local trains.
func (l *Local) Client() int { return l.client }

// Rounds is the run's number of rounds.
func (l *Local) Rounds() int { return l.rounds }

// Round is the current round.
func (l *Local) Round() int { return l.round }

// Evaluates reports, for a RoundEnder's Local, whether every client is evaluated right
// after this round (FedALA's and pFedFDA's evaluation models are prepared then); false in
// Train.
func (l *Local) Evaluates() bool { return l.evaluates }

// Epochs is the run's number of local epochs.
func (l *Local) Epochs() int { return l.epochs }

// LR is the run's learning rate.
func (l *Local) LR() float32 { return l.opt.LR }

// TrainSize is the client's number of training samples.
func (l *Local) TrainSize() int { return len(l.data.trainY) }

// Batches calls fn on every mini-batch of epochs passes over the client's training data,
// epoch e in the order of the stream (seed, round, client, stream+"/e"). With
// train.augment, the batches are augmented (see augmenter) from the stream (seed, round,
// client, stream+"/e/augment"). The slices are reused between calls.
func (l *Local) Batches(epochs int, stream string, fn func(epoch int, x []float32, y []int32) error) error {
	n := len(l.data.trainY)
	if n == 0 {
		return nil
	}
	size := len(l.data.trainX) / n
	bx := make([]float32, 0, l.batch*size)
	by := make([]int32, 0, l.batch)
	for e := 0; e < epochs; e++ {
		perm := rng.New(l.seed, l.round, l.client, fmt.Sprintf("%s/%d", stream, e)).Perm(n)
		var augRNG *rand.Rand
		if l.aug != nil {
			augRNG = rng.New(l.seed, l.round, l.client, fmt.Sprintf("%s/%d/augment", stream, e))
		}
		for start := 0; start < n; start += l.batch {
			bx, by = bx[:0], by[:0]
			for _, i := range perm[start:min(start+l.batch, n)] {
				bx = append(bx, l.data.trainX[i*size:(i+1)*size]...)
				by = append(by, l.data.trainY[i])
			}
			if l.aug != nil {
				l.aug.apply(augRNG, bx)
			}
			if err := fn(e, bx, by); err != nil {
				return err
			}
		}
	}
	return nil
}

// Fisher returns the diagonal empirical Fisher information of the client's training data
// at params: the mean over its samples of the squared per-sample gradient.
func (l *Local) Fisher(params tensor.List) (tensor.List, error) {
	out := ZeroMask(params)
	n := len(l.data.trainY)
	if n == 0 {
		return out, nil
	}
	size := len(l.data.trainX) / n
	for i := 0; i < n; i++ {
		g, err := l.gradient(params, l.data.trainX[i*size:(i+1)*size], l.data.trainY[i:i+1])
		if err != nil {
			return nil, err
		}
		l.Count(1, nil)
		for t := range g {
			o := out[out.Find(g[t].Name)].Data
			for j, v := range g[t].Data {
				o[j] += v * v / float32(n)
			}
		}
	}
	return out, nil
}

// FullGradientSquared returns the square, entry by entry, of the gradient of the client's
// mean training loss at params (computed over batches of EvalBatch samples, each weighted
// by its size): FedOBP's Fisher score (Eq. 6).
func (l *Local) FullGradientSquared(params tensor.List) (tensor.List, error) {
	out := ZeroMask(params)
	n := len(l.data.trainY)
	if n == 0 {
		return out, nil
	}
	size := len(l.data.trainX) / n
	for start := 0; start < n; start += EvalBatch {
		end := min(start+EvalBatch, n)
		g, err := l.gradient(params, l.data.trainX[start*size:end*size], l.data.trainY[start:end])
		if err != nil {
			return nil, err
		}
		l.Count(int64(end-start), nil)
		w := float32(end-start) / float32(n)
		for t := range g {
			o := out[out.Find(g[t].Name)].Data
			for j, v := range g[t].Data {
				o[j] += w * v
			}
		}
	}
	for _, t := range out {
		for j, v := range t.Data {
			t.Data[j] = v * v
		}
	}
	return out, nil
}

// Train runs epochs of mini-batch SGD from params on the client's training data at
// learning rate lr, updating only the entries where mask is 1 (nil: all). Momentum starts
// at zero. The sample order of epoch e comes from the stream (seed, round, client,
// stream+"/e"), so two calls with different stream names see independent orders.
func (l *Local) Train(params, mask tensor.List, lr float32, epochs int, stream string) (tensor.List, error) {
	return l.TrainProx(params, mask, lr, epochs, stream, 0, nil)
}

// TrainProx is Train with the proximal term μ/2·‖θ − ref‖² added to the loss (μ = 0: none).
func (l *Local) TrainProx(params, mask tensor.List, lr float32, epochs int, stream string, mu float32, ref tensor.List) (tensor.List, error) {
	n := len(l.data.trainY)
	if n == 0 || epochs == 0 {
		return params.Clone(), nil
	}
	opt := l.opt
	opt.LR = lr
	if !l.frozenBN && l.group.accepts(opt, mask, mu) {
		l.Count(int64(n)*int64(epochs), params)
		return l.group.train(params, func(step func(x []float32, y []int32) (float32, error)) error {
			return l.Batches(epochs, stream, func(e int, x []float32, y []int32) error {
				loss, err := step(x, y)
				if err != nil {
					return err
				}
				return diverged(loss, e)
			})
		})
	}
	var out tensor.List
	err := l.group.exclusive(func() (err error) {
		out, err = l.trainSession(params, mask, opt, epochs, stream, mu, ref)
		return err
	})
	return out, err
}

// diverged is the error of a training loss that is no longer finite (nil while it is).
func diverged(loss float32, epoch int) error {
	if math.IsNaN(float64(loss)) || math.IsInf(float64(loss), 0) {
		return fmt.Errorf("training diverged (loss %v at epoch %d): lower the learning rate", loss, epoch+1)
	}
	return nil
}

// gradient is the model's gradient at params on one batch, with the model to itself.
func (l *Local) gradient(params tensor.List, x []float32, y []int32) (g tensor.List, err error) {
	err = l.group.exclusive(func() error {
		g, err = l.model.Gradient(params, x, y)
		return err
	})
	return g, err
}

// trainSession is TrainProx's passes on a Session of the Local's model.
func (l *Local) trainSession(params, mask tensor.List, opt model.SGD, epochs int, stream string, mu float32, ref tensor.List) (tensor.List, error) {
	n := len(l.data.trainY)
	m := l.model
	if l.frozenBN {
		var err error
		if m, err = m.FrozenBN(); err != nil {
			return nil, err
		}
	}
	s, err := m.NewSession(params, opt)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if mask != nil {
		if err := s.SetMask(mask); err != nil {
			return nil, err
		}
	}
	if mu != 0 {
		if err := s.SetProx(mu, ref); err != nil {
			return nil, err
		}
	}
	l.Count(int64(n)*int64(epochs), params)
	err = l.Batches(epochs, stream, func(e int, x []float32, y []int32) error {
		loss, err := s.Step(x, y)
		if err != nil {
			return err
		}
		return diverged(loss, e)
	})
	if err != nil {
		return nil, err
	}
	return s.Params()
}

// EvalBatch is the batch size of evaluation.
const EvalBatch = 256

// evalOptions say how clients are evaluated.
type evalOptions struct {
	method     Method
	finetune   int // local epochs of fine-tuning before evaluating (not kept)
	batch      int
	opt        model.SGD
	seed       int64
	aug        *augmenter  // fine-tuning augments like training
	trainSplit bool        // also evaluate the training split (train.eval_train_split)
	pool       *clientPool // fine-tunes clients side by side (nil: one after another)
	// multi, when set, fine-tunes every client in lockstep on it instead (see lockGroup).
	multi *model.Model
}

// mayTune reports whether an evaluation may fine-tune: the run's finetune_epochs or the
// method's own Finetuner.
func (o evalOptions) mayTune() bool {
	_, own := optional[Finetuner](o.method)
	return o.finetune != 0 || own
}

// tuningPool is the pool an evaluation spreads its clients over: fine-tuning a copy reads
// nothing but the client's model and data, whatever the method; without fine-tuning there
// is nothing to spread (nil: one client after another).
func (o evalOptions) tuningPool() *clientPool {
	if !o.mayTune() {
		return nil
	}
	return o.pool
}

// tuningMulti is the model an evaluation fine-tunes in lockstep on, nil when it does not
// (no lockstep, or nothing to fine-tune).
func (o evalOptions) tuningMulti() *model.Model {
	if !o.mayTune() {
		return nil
	}
	return o.multi
}

// evalData returns the splits of client c an evaluation scores: its test split, and its
// training split only with trainSplit.
func (o evalOptions) evalData(cs clientSet, c int) clientData {
	var cd clientData
	if o.trainSplit {
		cd = cs.train(c)
	}
	cd.testX, cd.testY = cs.test(c)
	return cd
}

func evalOpts(r *manifest.Run, opt model.SGD, method Method) evalOptions {
	return evalOptions{method: method, finetune: r.Train.FinetuneEpochs, batch: r.Train.BatchSize, opt: opt, seed: r.Seed, trainSplit: r.Train.EvalTrainSplit}
}

// prepare returns the model client c is evaluated with after fine-tuning: its evaluation
// model fine-tuned for the configured epochs on its training data (stream "finetune"),
// and false when the run does not fine-tune (then p itself). Fine-tuning never changes
// the state.
func (o evalOptions) prepare(m *model.Model, p tensor.List, cs clientSet, round, c int, group *lockGroup) (tensor.List, bool, error) {
	epochs, mask := o.finetune, tensor.List(nil)
	if f, ok := optional[Finetuner](o.method); ok {
		if e, mk, own := f.Finetune(p); own {
			epochs, mask = e, mk
		}
	}
	if epochs == 0 {
		return p, false, nil
	}
	l := &Local{model: m, opt: o.opt, data: cs.train(c), epochs: epochs, batch: o.batch, seed: o.seed, round: round, client: c, aug: o.aug,
		group: group}
	ft, err := l.Train(p, mask, o.opt.LR, epochs, "finetune")
	return ft, true, err
}

// evaluateAll evaluates every client after round on its test split with the model the
// method holds ("test") and, for runs that fine-tune, on its test split again with a
// fine-tuned copy (SplitTestFT), as FL-bench does at every evaluation. The training split
// ("train") is evaluated too only with train.eval_train_split: nothing downstream reads it.
func evaluateAll(ctx context.Context, m *model.Model, method Method, st *State, cs clientSet, round int, o evalOptions) ([]Metric, error) {
	if _, multi := optional[MultiModel](method); !multi {
		return evaluateEach(ctx, m, method, st, cs, round, o)
	}
	var rows []Metric
	n := cs.n()
	held := make([]tensor.List, n)
	prepared := make([]tensor.List, n)
	ft := make([]bool, n)
	for c := range n {
		held[c] = method.EvalModel(st, c)
	}
	err := spread(ctx, o.tuningPool(), m, o.tuningMulti(), o.opt, n, cs.trainSize, func(c int, m *model.Model, group *lockGroup) error {
		var err error
		if prepared[c], ft[c], err = o.prepare(m, held[c], cs, round, c, group); err != nil {
			return fmt.Errorf("fine-tuning client %d: %w", c, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	finetuned := slices.Contains(ft, true)
	evaluator := func(models []tensor.List) (Evaluator, error) {
		mm, ok := optional[MultiModel](method)
		if !ok {
			return scoring(method, PlainEvaluator(m, models), o.batch), nil
		}
		global := func() tensor.List {
			if g, ok := optional[GlobalEvaluator](method); ok {
				return g.EvalGlobal(st)
			}
			return st.Global
		}
		return mm.MultiEvaluator(m, global, models, func(c int, test bool) []float32 {
			if test {
				x, _ := cs.test(c)
				return x
			}
			return cs.train(c).trainX
		})
	}
	ev, err := evaluator(held)
	if err != nil {
		return nil, err
	}
	var evFT Evaluator
	if finetuned {
		if evFT, err = evaluator(prepared); err != nil {
			return nil, err
		}
	}
	for c := range n {
		cd := o.evalData(cs, c)
		for _, split := range []struct {
			name string
			ev   Evaluator
			x    []float32
			y    []int32
		}{{"train", ev, cd.trainX, cd.trainY}, {"test", ev, cd.testX, cd.testY}, {SplitTestFT, evFT, cd.testX, cd.testY}} {
			if split.ev == nil || (split.name == "train" && !o.trainSplit) {
				continue
			}
			row, err := split.ev.Evaluate(c, split.x, split.y)
			if err != nil {
				return nil, fmt.Errorf("evaluating client %d: %w", c, err)
			}
			row.Round, row.Client, row.Split = round, c, split.name
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// evaluateEach is evaluateAll for methods that score a client with one model: each client's
// model is fine-tuned and scored on its own (side by side where the run fine-tunes), and
// dropped, so an evaluation holds a few clients' models rather than every client's model and
// fine-tuned copy (100 FedOBP clients: about 460 MB). The rows are evaluateAll's, in the same
// order: a model is scored the same on any of the pool's models (fpfast's results do not
// depend on threads).
func evaluateEach(ctx context.Context, m *model.Model, method Method, st *State, cs clientSet, round int, o evalOptions) ([]Metric, error) {
	n := cs.n()
	pool := o.tuningPool()
	mayTune := o.mayTune()
	type result struct {
		rows []Metric // train (with trainSplit), test
		ft   Metric   // test after fine-tuning (the held model's test row if it did not)
		did  bool     // fine-tuned
	}
	res := make([]result, n)
	// In lockstep every client runs at once and fine-tunes in one step; scoring takes turns
	// on the shared model.
	err := spread(ctx, pool, m, o.tuningMulti(), o.opt, n, cs.trainSize, func(c int, mw *model.Model, group *lockGroup) error {
		held := method.EvalModel(st, c)
		cd := o.evalData(cs, c)
		score := func(p tensor.List, split string, x []float32, y []int32) (row Metric, err error) {
			err = group.exclusive(func() (err error) {
				row, err = scoring(method, single{mw, p}, o.batch).Evaluate(c, x, y)
				return err
			})
			if err != nil {
				return row, fmt.Errorf("evaluating client %d: %w", c, err)
			}
			row.Round, row.Client, row.Split = round, c, split
			return row, nil
		}
		r := &res[c]
		if o.trainSplit {
			row, err := score(held, "train", cd.trainX, cd.trainY)
			if err != nil {
				return err
			}
			r.rows = append(r.rows, row)
		}
		row, err := score(held, "test", cd.testX, cd.testY)
		if err != nil {
			return err
		}
		r.rows = append(r.rows, row)
		if !mayTune {
			return nil
		}
		prepared, did, err := o.prepare(mw, held, cs, round, c, group)
		if err != nil {
			return fmt.Errorf("fine-tuning client %d: %w", c, err)
		}
		r.did, r.ft = did, row
		r.ft.Split = SplitTestFT
		if did {
			r.ft, err = score(prepared, SplitTestFT, cd.testX, cd.testY)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	finetuned := false
	for _, r := range res {
		finetuned = finetuned || r.did
	}
	var rows []Metric
	for _, r := range res {
		rows = append(rows, r.rows...)
		if finetuned {
			rows = append(rows, r.ft)
		}
	}
	return rows, nil
}

// single scores every client with one model (evaluateEach's evaluator of one client).
type single struct {
	m *model.Model
	p tensor.List
}

func (s single) Evaluate(_ int, x []float32, y []int32) (Metric, error) {
	return Evaluate(s.m, s.p, x, y)
}

// PrepareFinal returns the models the clients are finally evaluated with after
// fine-tuning (with the same streams as the last round's evaluation in training), and
// false, with the final models themselves, when the run does not fine-tune.
func PrepareFinal(m *model.Model, r *manifest.Run, ds *data.Dataset, a *partition.Assignment, models []tensor.List) ([]tensor.List, bool, error) {
	cs := clientSet{d: ds, a: a}
	method, err := NewRunMethod(r)
	if err != nil {
		return nil, false, err
	}
	o := evalOpts(r, model.SGD{LR: float32(r.Train.LR), Momentum: float32(r.Train.Momentum), WeightDecay: float32(r.Train.WeightDecay)}, method)
	if o.aug, err = newAugmenter(r.Train, ds); err != nil {
		return nil, false, err
	}
	out := make([]tensor.List, cs.n())
	finetuned := false
	for c := range out {
		var ft bool
		if out[c], ft, err = o.prepare(m, models[c], cs, r.Train.Rounds, c, nil); err != nil {
			return nil, false, fmt.Errorf("fine-tuning client %d: %w", c, err)
		}
		finetuned = finetuned || ft
	}
	return out, finetuned, nil
}

// EvaluateFinal evaluates the final models on each client's test split: before
// fine-tuning (the models as they are), and after (nil when the run does not fine-tune).
// See FinalEvaluator; global only for methods that need it.
func EvaluateFinal(m *model.Model, r *manifest.Run, ds *data.Dataset, a *partition.Assignment, models []tensor.List, global tensor.List) (before, after []Metric, err error) {
	prepared, finetuned, err := PrepareFinal(m, r, ds, a, models)
	if err != nil {
		return nil, nil, err
	}
	score := func(models []tensor.List) ([]Metric, error) {
		ev, err := evaluatorOf(m, r, ds, a, models, global)
		if err != nil {
			return nil, err
		}
		rows := make([]Metric, len(models))
		for c := range models {
			x, y := ds.Gather(a.Test[c])
			row, err := ev.Evaluate(c, x, y)
			if err != nil {
				return nil, err
			}
			row.Round, row.Client, row.Split = r.Train.Rounds, c, "test"
			rows[c] = row
		}
		return rows, nil
	}
	if before, err = score(models); err != nil || !finetuned {
		return before, nil, err
	}
	after, err = score(prepared)
	return before, after, err
}

// Evaluate computes the mean loss and accuracy of params on (x, y).
func Evaluate(m *model.Model, params tensor.List, x []float32, y []int32) (Metric, error) {
	if len(y) == 0 {
		return Metric{}, nil
	}
	sum, correct, err := m.Evaluate(params, x, y, EvalBatch)
	if err != nil {
		return Metric{}, err
	}
	return Metric{Loss: sum / float64(len(y)), Accuracy: float64(correct) / float64(len(y)), Samples: len(y)}, nil
}

// MeanAccuracy is the unweighted mean over clients of the accuracy rows of one split.
func MeanAccuracy(rows []Metric, split string) float64 {
	s, n := 0.0, 0
	for _, r := range rows {
		if r.Split == split {
			s += r.Accuracy
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// initSeed is the seed of a run's initial model: every client and method of a seed starts
// from the same weights.
func initSeed(r *manifest.Run) uint64 { return rng.Seed(r.Seed, 0, rng.Global, "init") }

// EvalModels returns, for each of the clients, the model it is evaluated with at the end
// of a run in state st.
func EvalModels(r *manifest.Run, st *State, clients int) ([]tensor.List, error) {
	out := make([]tensor.List, clients)
	err := EachEvalModel(r, st, clients, func(c int, m tensor.List) { out[c] = m })
	return out, err
}

// EachEvalModel is EvalModels passing each client's model to fn in client order instead of
// keeping them all.
func EachEvalModel(r *manifest.Run, st *State, clients int, fn func(c int, m tensor.List)) error {
	m, err := NewRunMethod(r)
	if err != nil {
		return err
	}
	for c := range clients {
		fn(c, m.EvalModel(st, c))
	}
	return nil
}
