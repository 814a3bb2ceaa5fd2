package train

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/rng"
)

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
	// loss tallies the round's training losses for Config.Observe (observe.go).
	loss lossTally
}

// WithFrozenBN returns a Local whose passes (Fit, Gradient, Fisher,
// FullGradientSquared, and the model WithModel hands out) run BatchNorm as in evaluation:
// the running statistics normalize and stay unchanged (model.Model.FrozenBN). The receiver
// is unchanged; work the copy does is counted on l. Such passes run on their own, never in
// lockstep. Without BatchNorm it computes exactly as l.
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
	// Evaluates: every client is evaluated right after this round (Local.Evaluates).
	Evaluates bool
}

// NewLocal returns the Local of one client in one round, without augmentation: for
// methods' tests and tools that train a client outside Run.
func NewLocal(c LocalConfig) *Local {
	return &Local{model: c.Model, opt: c.Optimizer, data: clientData{trainX: c.TrainX, trainY: c.TrainY},
		epochs: c.Epochs, batch: c.BatchSize, seed: c.Seed, round: c.Round, client: c.Client, rounds: c.Rounds,
		evaluates: c.Evaluates}
}

// Model is the compiled model the client trains with (not safe to keep after the round).
func (l *Local) Model() *model.Model { return l.model }

// WithModel runs fn with the client's compiled model to itself: in lockstep training
// (Config.Lockstep) a round's clients share one model and take turns on it; otherwise the
// model is this client's own. A method whose clients train concurrently calls the model
// directly only through it. On a WithFrozenBN Local, fn gets the model's frozen-BatchNorm
// sibling (model.Model.FrozenBN), so its training passes normalize as in evaluation.
func (l *Local) WithModel(fn func(m *model.Model) error) error {
	return l.group.exclusive(func() error {
		m, err := l.passModel()
		if err != nil {
			return err
		}
		return fn(m)
	})
}

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
	return l.fisherPass(params, func(m *model.Model, n int, dst [][]float32) error {
		return m.SampleGradients(params, l.data.trainX, l.data.trainY, func(_, t int, g []float32) error {
			if t == 0 {
				l.Count(1, nil)
			}
			o := dst[t][:len(g)]
			for j, v := range g {
				o[j] += v * v / float32(n)
			}
			return nil
		})
	})
}

// BatchedFisher is Fisher computed with Model.SquaredGradientSum: every sample's squared
// gradient formed and summed inside one compiled graph per chunk of samples, then divided
// by the number of samples. It equals Fisher up to the order of float32 sums (FedDPA's; the
// empirical Fisher of FedOBP's fisher option stays Fisher's).
func (l *Local) BatchedFisher(params tensor.List) (tensor.List, error) {
	return l.fisherPass(params, func(m *model.Model, n int, dst [][]float32) error {
		sums, err := m.SquaredGradientSum(params, l.data.trainX, l.data.trainY)
		if err != nil {
			return err
		}
		l.Count(int64(n), nil)
		for t, s := range sums {
			o := dst[t]
			for j, v := range s {
				o[j] = v / float32(n)
			}
		}
		return nil
	})
}

// fisherPass runs fill inside the client's exclusive section with its pass model, its
// number of training samples n and the buffers of a zero list shaped as params, in the
// model's parameter order, and returns that list (still zero for a client with no samples).
func (l *Local) fisherPass(params tensor.List, fill func(m *model.Model, n int, dst [][]float32) error) (tensor.List, error) {
	out := ZeroMask(params)
	n := len(l.data.trainY)
	if n == 0 {
		return out, nil
	}
	err := l.group.exclusive(func() error {
		m, err := l.passModel()
		if err != nil {
			return err
		}
		names := m.Names()
		dst := make([][]float32, len(names))
		for t, name := range names {
			k := out.Find(name)
			if k < 0 {
				return fmt.Errorf("fisher: no parameter %q", name)
			}
			dst[t] = out[k].Data
		}
		return fill(m, n, dst)
	})
	if err != nil {
		return nil, err
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

// Fit says what one call of Local.Fit trains and how. Its zero value trains every entry
// for the run's epochs at the run's learning rate, on the "shuffle" stream, with momentum
// starting at zero and no proximal term: a method's plain local training.
type Fit struct {
	// Mask is 1 at the entries that train (nil: every entry).
	Mask tensor.List
	// Stream names the sample order: epoch e's order comes from the stream (seed, round,
	// client, Stream+"/e"), so calls with different names see independent orders. "" is
	// "shuffle", the stream of a method's main training.
	Stream string
	// LR is the learning rate (0: the run's train.lr).
	LR float32
	// Epochs is how many epochs (0: the run's train.local_epochs); Exactly(n) asks for n,
	// none when n is 0.
	Epochs int
	// Mu > 0 adds the proximal term Mu/2·‖θ − Ref‖² to the loss.
	Mu  float32
	Ref tensor.List
	// Momentum, when set, carries the optimizer's momentum across calls: training starts
	// from *Momentum (nil: zero) and leaves the buffers it ends with there, for a method
	// whose optimizer state outlives a round (FL-bench's FedALA restores a client's
	// optimizer state, fedALAState.Moms). Such training runs on its own, never in lockstep.
	Momentum *tensor.List
}

// noEpochs is Fit.Epochs for no epoch at all (Exactly(0)).
const noEpochs = -1

// Exactly is the Fit.Epochs of exactly n epochs, also when n is 0 (which Fit reads as the
// run's): for a method that computes how many epochs a part trains (FedRep's head).
func Exactly(n int) int {
	if n <= 0 {
		return noEpochs
	}
	return n
}

// Fit runs mini-batch SGD from params on the client's training data as f says and returns
// the trained parameters (params itself is not changed).
func (l *Local) Fit(params tensor.List, f Fit) (tensor.List, error) {
	lr, epochs, stream := f.LR, f.Epochs, f.Stream
	if lr == 0 {
		lr = l.opt.LR
	}
	switch {
	case epochs == 0:
		epochs = l.epochs
	case epochs < 0:
		epochs = 0
	}
	if stream == "" {
		stream = "shuffle"
	}
	return l.train(params, f.Mask, lr, epochs, stream, f.Mu, f.Ref, f.Momentum)
}

// train is Fit's training with every setting resolved (see trainSession for mom); only
// training that starts and ends with no momentum to carry may run in lockstep.
func (l *Local) train(params, mask tensor.List, lr float32, epochs int, stream string, mu float32, ref tensor.List, mom *tensor.List) (tensor.List, error) {
	n := len(l.data.trainY)
	if n == 0 || epochs == 0 {
		return params.Clone(), nil
	}
	opt := l.opt
	opt.LR = lr
	if mom == nil && !l.frozenBN && l.group.accepts(opt, mask, mu) {
		l.Count(int64(n)*int64(epochs), params)
		return l.group.train(params, func(step func(x []float32, y []int32) (float32, error)) error {
			return l.Batches(epochs, stream, func(e int, x []float32, y []int32) error {
				loss, err := step(x, y)
				if err != nil {
					return err
				}
				l.noteLoss(loss)
				return diverged(loss, e)
			})
		})
	}
	var out tensor.List
	err := l.group.exclusive(func() (err error) {
		out, err = l.trainSession(params, mask, opt, epochs, stream, mu, ref, mom)
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
		m, err := l.passModel()
		if err != nil {
			return err
		}
		g, err = m.Gradient(params, x, y)
		return err
	})
	return g, err
}

// passModel is the compiled model a pass of l runs on: the model's FrozenBN sibling for a
// WithFrozenBN Local, else the model.
func (l *Local) passModel() (*model.Model, error) {
	if l.frozenBN {
		return l.model.FrozenBN()
	}
	return l.model, nil
}

// trainSession is Fit's passes on a Session of the Local's model. With mom non-nil
// the momentum buffers start at *mom (nil: zero) and *mom receives them at the end.
func (l *Local) trainSession(params, mask tensor.List, opt model.SGD, epochs int, stream string, mu float32, ref tensor.List, mom *tensor.List) (tensor.List, error) {
	n := len(l.data.trainY)
	m, err := l.passModel()
	if err != nil {
		return nil, err
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
	if mom != nil && *mom != nil {
		if err := s.SetMomentum(*mom); err != nil {
			return nil, err
		}
	}
	l.Count(int64(n)*int64(epochs), params)
	err = l.Batches(epochs, stream, func(e int, x []float32, y []int32) error {
		loss, err := s.Step(x, y)
		if err != nil {
			return err
		}
		l.noteLoss(loss)
		return diverged(loss, e)
	})
	if err != nil {
		return nil, err
	}
	if mom != nil {
		if *mom, err = s.Momentum(); err != nil {
			return nil, err
		}
	}
	return s.Params()
}
