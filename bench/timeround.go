package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
)

// RoundConfig describes the federated round TimeRound times. DefaultRoundConfig is the
// FedOBP-FMNIST setting of ../shared/bench/torch_round.py.
type RoundConfig struct {
	// Clients is the number of clients and TrainSamples their training samples in all;
	// sizes are uneven (Gamma(0.7)-distributed shares, at least 10 each) and each client
	// holds a third of its training size as test samples (at least 3).
	Clients, TrainSamples int
	// Participants train each round: the clients whose sizes are closest to the mean.
	Participants int
	// Epochs of local training per round, FinetuneEpochs before the fine-tuned evaluation
	// (0: that evaluation is skipped).
	Epochs, FinetuneEpochs int
	// Batch is the training batch (the last batch of an epoch is ragged), EvalBatch the
	// evaluation batch.
	Batch, EvalBatch int
	// Rounds are timed after one warm-up round; their mean is reported.
	Rounds int
	// Opt is the local optimizer (reset at every round, as FL-bench does).
	Opt model.SGD
	// Seed fixes sizes, data and sample orders.
	Seed uint64
	// Workers is how many clients train (and are evaluated) at the same time, each on its
	// own single-threaded model, as the train stage does for methods that allow it (see
	// SingleThreaded); 0: GOMAXPROCS; 1: one after another, each op on every core.
	Workers int
	// Lockstep trains the participants (and fine-tunes the evaluated clients) in one
	// compiled step, all at once (MultiSession), as the train stage does on XLA, and then
	// ignores Workers. As in the train stage (stages/train/round.go), it applies only to a
	// model that pads batches (no BatchNorm); another trains its clients as without it, and
	// the result says why (RoundResult.NoLockstep).
	Lockstep bool
	// Spec is the model and input shape (zero: cnn4 on 28×28×1, 10 classes).
	Spec model.ModelSpec
	// AfterRound, when set, is called at the end of every timed round, inside the timing
	// (bench --round --journal times the train stage's progress journal this way).
	AfterRound func(round int)
	// EvenSizes gives every client TrainSamples/Clients training samples instead of
	// Gamma-distributed shares.
	EvenSizes bool
}

// FedSelectRoundConfig is one round of FedSelect's Table 1 CIFAR-10 setting: 10 clients of
// 100 training samples, all participating, 3 local epochs, batch 32, SGD lr 0.05 without
// momentum, the ImageNet-style ResNet-18 on 32×32×3; no fine-tuning.
func FedSelectRoundConfig() RoundConfig {
	return RoundConfig{Clients: 10, TrainSamples: 1000, Participants: 10, Epochs: 3, Batch: 32, EvalBatch: 256,
		Rounds: 2, Opt: model.SGD{LR: 0.05}, EvenSizes: true,
		Spec: model.ModelSpec{Arch: model.ArchResNet18ImageNet, InputShape: []int{32, 32, 3}, NumClasses: 10}}
}

// spec is the benchmark's model.
func (cfg RoundConfig) spec() model.ModelSpec {
	if cfg.Spec.Arch == "" {
		return model.ModelSpec{Arch: model.ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}
	}
	return cfg.Spec
}

// DefaultRoundConfig is one round of FedOBP's Table 6 FMNIST setting: 100 clients holding
// 52,500 training samples, 10 participants, 5 local epochs, batch 32, SGD lr 0.01 with
// momentum 0.7, evaluation of all clients with and without 5 fine-tuning epochs.
func DefaultRoundConfig() RoundConfig {
	return RoundConfig{Clients: 100, TrainSamples: 52500, Participants: 10, Epochs: 5, FinetuneEpochs: 5,
		Batch: 32, EvalBatch: 256, Rounds: 2, Opt: model.SGD{LR: 0.01, Momentum: 0.7}, Seed: 0}
}

// RoundResult is what TimeRound measured.
type RoundResult struct {
	// RoundSeconds is the mean wall time of one round: every participant's local training
	// from the global model, then the size-weighted average of their models.
	RoundSeconds float64
	// RoundSamples is the number of training samples one round processes.
	RoundSamples int
	// EvalSeconds is the time to evaluate the global model on every client's test set;
	// EvalFTSeconds the time to fine-tune a copy for each client and evaluate it (0 if
	// FinetuneEpochs is 0).
	EvalSeconds, EvalFTSeconds float64
	// Compilations counts the graphs compiled, by graph (see Model.Compilations), over all
	// the models the clients ran on.
	Compilations map[string]int
	// Workers is how many clients ran side by side; Lockstep is the most clients one
	// lockstep step trained (0: no lockstep).
	Workers, Lockstep int
	// NoLockstep says why lockstep was asked for and not used (empty otherwise).
	NoLockstep string
	// LockstepSteps is the number of steps a timed round took in lockstep: its largest
	// participant's, since a lockstep step costs the same however many of its clients still
	// have a batch (idle ones are masked, not left out). DrawnLockstepSteps is the mean of
	// that number over rounds whose participants are drawn at random from all the clients, as
	// a run draws them, where the bench times the ones nearest the mean size. Both are 0
	// without lockstep.
	LockstepSteps      int
	DrawnLockstepSteps float64
}

// DrawnRoundSeconds is the round time of a run that draws its participants at random: in
// lockstep, RoundSeconds scaled by DrawnLockstepSteps/LockstepSteps (a round lasts as long
// as its largest client trains); otherwise RoundSeconds (clients side by side share the
// cores, so a round costs its samples, which the bench's mean-sized participants match).
func (r RoundResult) DrawnRoundSeconds() float64 {
	if r.LockstepSteps == 0 {
		return r.RoundSeconds
	}
	// The ratio first: when every draw takes the timed round's steps it is exactly 1, and
	// the drawn round is the timed one to the bit (x·s/s need not be x in floating point).
	return r.RoundSeconds * (r.DrawnLockstepSteps / float64(r.LockstepSteps))
}

// clientSteps is the number of SGD steps of epochs passes over n samples in batches of
// batch (the last one of each pass ragged), as model.BatchPlan makes them.
func clientSteps(n, epochs, batch int) int {
	return epochs * ((n + batch - 1) / batch)
}

// drawnLockstepSteps is the mean, over draws of k distinct clients chosen uniformly at
// random from those of the given sizes (2,000 draws from seed), of the most steps one of
// the k takes (clientSteps): the length of a lockstep round whose participants a run draws.
func drawnLockstepSteps(sizes []int, k, epochs, batch int, seed uint64) float64 {
	if k <= 0 || k > len(sizes) {
		return 0
	}
	const draws = 2000
	r := rand.New(rand.NewPCG(seed, 0x647261776e)) // "drawn"
	steps := make([]int, len(sizes))
	for i, n := range sizes {
		steps[i] = clientSteps(n, epochs, batch)
	}
	total := 0
	for range draws {
		most := 0
		for j := range k { // a partial Fisher–Yates shuffle: steps[:k] is the draw
			o := j + r.IntN(len(steps)-j)
			steps[j], steps[o] = steps[o], steps[j]
			most = max(most, steps[j])
		}
		total += most
	}
	return float64(total) / draws
}

// TrainSamplesPerSec is the training throughput within a round.
func (r RoundResult) TrainSamplesPerSec() float64 {
	return float64(r.RoundSamples) / r.RoundSeconds
}

// CellSeconds projects the wall time of a run of rounds rounds that evaluates every
// evalEvery rounds, before and after fine-tuning (FedOBP Table 6: 400 and 100).
func CellSeconds(round, eval, evalFT float64, rounds, evalEvery int) float64 {
	return float64(rounds)*round + float64(rounds/evalEvery)*(eval+evalFT)
}

// TimeRound times one federated round of cfg on the backend, by default with the cnn4
// model on 28×28×1 inputs (10 classes), as ../shared/bench/torch_round.py does in PyTorch:
// the same client size distribution (drawn with Go's generators, so not the same sizes),
// random data, the same work per round and per evaluation.
func TimeRound(backend string, cfg RoundConfig) (RoundResult, error) {
	if cfg.Clients <= 0 || cfg.Participants <= 0 || cfg.Participants > cfg.Clients || cfg.Batch <= 0 ||
		cfg.EvalBatch <= 0 || cfg.Rounds <= 0 || cfg.Epochs <= 0 {
		return RoundResult{}, fmt.Errorf("BenchRound: invalid configuration %+v", cfg)
	}
	spec := cfg.spec()
	m, err := model.NewModel(backend, spec)
	if err != nil {
		return RoundResult{}, err
	}
	defer m.Close()
	var noLockstep string
	if cfg.Lockstep && !m.PadsBatches() {
		noLockstep = fmt.Sprintf("lockstep needs a model that pads batches, and %s on %s does not (BatchNorm's batch statistics would see the padding rows)", spec.Arch, backend)
		cfg.Lockstep = false
	}
	clients := model.SyntheticClients(cfg.Clients, cfg.TrainSamples, cfg.EvenSizes, cfg.Seed, spec)
	mean := float64(cfg.TrainSamples) / float64(cfg.Clients)
	order := make([]int, cfg.Clients)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		da, db := math.Abs(float64(len(clients[a].TrainY))-mean), math.Abs(float64(len(clients[b].TrainY))-mean)
		switch {
		case da < db:
			return -1
		case da > db:
			return 1
		}
		return 0
	})
	sel := order[:cfg.Participants]
	global := spec.Init(cfg.Seed)
	res := RoundResult{NoLockstep: noLockstep}
	for _, c := range sel {
		res.RoundSamples += cfg.Epochs * len(clients[c].TrainY)
	}
	if cfg.Lockstep {
		sizes := make([]int, len(clients))
		for i, cl := range clients {
			sizes[i] = len(cl.TrainY)
		}
		for _, c := range sel {
			res.LockstepSteps = max(res.LockstepSteps, clientSteps(sizes[c], cfg.Epochs, cfg.Batch))
		}
		res.DrawnLockstepSteps = drawnLockstepSteps(sizes, cfg.Participants, cfg.Epochs, cfg.Batch, cfg.Seed)
	}
	// Models the clients run on: m alone, or one single-threaded model per worker.
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	nets := []*model.Model{m}
	if single, ok := model.SingleThreaded(backend); ok && workers > 1 && !cfg.Lockstep {
		nets = nets[:0]
		for range workers {
			w, err := model.NewModel(single, spec)
			if err != nil {
				return RoundResult{}, err
			}
			defer w.Close()
			nets = append(nets, w)
		}
	}
	each := func(n int, fn func(i int, m *model.Model) error) error {
		return model.SideBySide(context.Background(), nets, n, fn)
	}
	// Each client's sample order comes from its own stream (seed, pass, client).
	pass := uint64(0)
	stream := func(c int) *rand.Rand { return rand.New(rand.NewPCG(cfg.Seed, pass<<32|uint64(c))) }
	// train trains the clients idx from params[i] for epochs: side by side, or in lockstep.
	train := func(params []tensor.List, idx []int, epochs int) ([]tensor.List, error) {
		out := make([]tensor.List, len(idx))
		if cfg.Lockstep {
			cls := make([]model.SyntheticClient, len(idx))
			rs := make([]*rand.Rand, len(idx))
			for i, c := range idx {
				cls[i], rs[i] = clients[c], stream(c)
			}
			res.Lockstep = max(res.Lockstep, len(idx))
			return model.LockstepTrain(m, params, cfg.Opt, cls, epochs, cfg.Batch, rs)
		}
		err := each(len(idx), func(i int, w *model.Model) error {
			var err error
			out[i], err = model.LocalTrain(w, params[i], cfg.Opt, clients[idx[i]], epochs, cfg.Batch, stream(idx[i]))
			return err
		})
		return out, err
	}
	repeat := func(p tensor.List, n int) []tensor.List {
		out := make([]tensor.List, n)
		for i := range out {
			out[i] = p
		}
		return out
	}
	round := func() error {
		pass++
		trained, err := train(repeat(global, len(sel)), sel, cfg.Epochs)
		if err != nil {
			return err
		}
		sizes := make([]int, len(sel))
		for k, c := range sel {
			sizes[k] = len(clients[c].TrainY)
		}
		next := model.AverageBySize(trained, sizes)
		global = next
		return nil
	}
	if err := round(); err != nil { // warm-up: compiles the graphs
		return res, err
	}
	start := time.Now()
	for r := range cfg.Rounds {
		if err := round(); err != nil {
			return res, err
		}
		if cfg.AfterRound != nil {
			cfg.AfterRound(r + 1)
		}
	}
	res.RoundSeconds = time.Since(start).Seconds() / float64(cfg.Rounds)
	start = time.Now()
	err = each(len(clients), func(i int, w *model.Model) error {
		_, _, err := w.Evaluate(global, clients[i].TestX, clients[i].TestY, cfg.EvalBatch)
		return err
	})
	if err != nil {
		return res, err
	}
	res.EvalSeconds = time.Since(start).Seconds()
	if cfg.FinetuneEpochs > 0 {
		pass++
		start = time.Now()
		if cfg.Lockstep {
			all := make([]int, len(clients))
			for i := range all {
				all[i] = i
			}
			tuned, err := train(repeat(global, len(clients)), all, cfg.FinetuneEpochs)
			if err != nil {
				return res, err
			}
			for i, p := range tuned {
				if _, _, err := m.Evaluate(p, clients[i].TestX, clients[i].TestY, cfg.EvalBatch); err != nil {
					return res, err
				}
			}
		} else {
			err = each(len(clients), func(i int, w *model.Model) error {
				p, err := model.LocalTrain(w, global, cfg.Opt, clients[i], cfg.FinetuneEpochs, cfg.Batch, stream(i))
				if err == nil {
					_, _, err = w.Evaluate(p, clients[i].TestX, clients[i].TestY, cfg.EvalBatch)
				}
				return err
			})
			if err != nil {
				return res, err
			}
		}
		res.EvalFTSeconds = time.Since(start).Seconds()
	}
	res.Workers = len(nets)
	res.Compilations = map[string]int{}
	for _, w := range nets {
		for k, v := range w.Compilations() {
			res.Compilations[k] += v
		}
	}
	return res, nil
}
