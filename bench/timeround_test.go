package bench

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
)

// TestBenchRoundSmall runs TimeRound on a small configuration: it measures every phase,
// counts the round's samples, and, thanks to padding, compiles one training graph and one
// evaluation graph per model the clients run on, however uneven the clients are.
func TestBenchRoundSmall(t *testing.T) {
	cfg := RoundConfig{Clients: 6, TrainSamples: 300, Participants: 3, Epochs: 2, FinetuneEpochs: 1,
		Batch: 16, EvalBatch: 256, Rounds: 1, Opt: model.SGD{LR: 0.01, Momentum: 0.7}, Seed: 1}
	var after []int
	cfg.AfterRound = func(r int) { after = append(after, r) }
	res, err := TimeRound(model.CPUBackend, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after, []int{1}) {
		t.Errorf("AfterRound called after rounds %v, want the one timed round", after)
	}
	if res.RoundSeconds <= 0 || res.EvalSeconds <= 0 || res.EvalFTSeconds <= 0 {
		t.Errorf("missing timings: %+v", res)
	}
	clients := model.SyntheticClients(cfg.Clients, cfg.TrainSamples, cfg.EvenSizes, cfg.Seed, model.ModelSpec{Arch: model.ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10})
	sizes := map[int]bool{}
	for _, c := range clients {
		sizes[len(c.TrainY)%cfg.Batch] = true
	}
	if len(sizes) < 3 {
		t.Fatalf("client sizes %v leave too few distinct ragged batches to test padding", sizes)
	}
	if res.RoundSamples <= 0 || res.RoundSamples%cfg.Epochs != 0 {
		t.Errorf("round samples %d", res.RoundSamples)
	}
	if res.Workers < 1 || res.Compilations["train"] != res.Workers || res.Compilations["eval"] != res.Workers {
		t.Errorf("compiled %v on %d models, want one train and one eval graph each", res.Compilations, res.Workers)
	}
	if got := CellSeconds(2, 3, 5, 400, 100); got != 400*2+4*8 {
		t.Errorf("CellSeconds = %v", got)
	}
}

// TestLockstepTrainMatchesLocal checks TimeRound's lockstep training gives each client the
// parameters its own Session gives, bit for bit, and that TimeRound runs in lockstep.
func TestLockstepTrainMatchesLocal(t *testing.T) {
	cfg := RoundConfig{Clients: 4, TrainSamples: 200, Participants: 4, Epochs: 2, FinetuneEpochs: 1,
		Batch: 16, EvalBatch: 256, Rounds: 1, Opt: model.SGD{LR: 0.01, Momentum: 0.7}, Seed: 2,
		Spec: model.ModelSpec{Arch: model.ArchCNN4, InputShape: []int{16, 16, 1}, NumClasses: 10}}
	spec := cfg.spec()
	m, err := model.NewModel(model.CPUBackend, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	clients := model.SyntheticClients(cfg.Clients, cfg.TrainSamples, cfg.EvenSizes, cfg.Seed, spec)
	stream := func(c int) *rand.Rand { return rand.New(rand.NewPCG(7, uint64(c))) }
	var params []tensor.List
	var rs []*rand.Rand
	for c := range clients {
		params = append(params, spec.Init(uint64(c)))
		rs = append(rs, stream(c))
	}
	got, err := model.LockstepTrain(m, params, cfg.Opt, clients, cfg.Epochs, cfg.Batch, rs)
	if err != nil {
		t.Fatal(err)
	}
	for c, cl := range clients {
		want, err := model.LocalTrain(m, params[c], cfg.Opt, cl, cfg.Epochs, cfg.Batch, stream(c))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got[c], want) {
			t.Errorf("client %d (%d samples): lockstep differs from its own session", c, len(cl.TrainY))
		}
	}
	cfg.Lockstep = true
	res, err := TimeRound(model.CPUBackend, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lockstep != cfg.Clients || res.Workers != 1 || res.Compilations["train-multi"] != 1 {
		t.Errorf("lockstep of %d clients on %d models, graphs %v; want %d on 1, one lockstep graph", res.Lockstep, res.Workers, res.Compilations, cfg.Clients)
	}
	// Every client takes part, so every draw is the round timed.
	most := 0
	for _, cl := range clients {
		most = max(most, len(model.BatchPlan(len(cl.TrainY), cfg.Epochs, cfg.Batch, stream(0))))
	}
	if res.LockstepSteps != most || res.DrawnLockstepSteps != float64(most) || res.DrawnRoundSeconds() != res.RoundSeconds {
		t.Errorf("lockstep steps %d, drawn %v, drawn round %v s of %v s; want %d, %d, the same", res.LockstepSteps,
			res.DrawnLockstepSteps, res.DrawnRoundSeconds(), res.RoundSeconds, most, most)
	}
	// (Lockstep on a BatchNorm model: TestBenchRoundLockstepFallsBackWithoutPadding.)
	fs := FedSelectRoundConfig()
	if cl := model.SyntheticClients(fs.Clients, fs.TrainSamples, fs.EvenSizes, fs.Seed, fs.spec()); len(cl) != 10 || len(cl[0].TrainY) != 100 || len(cl[9].TrainY) != 100 {
		t.Errorf("FedSelect clients: %d, sizes %d…%d; want 10 of 100", len(cl), len(cl[0].TrainY), len(cl[len(cl)-1].TrainY))
	}
}

// TestBenchRoundLockstepFallsBackWithoutPadding checks that lockstep asked for on a model
// that cannot pad batches (BatchNorm) trains its clients as the train stage then does, one
// model per client, and says why, instead of failing (bench --round on xla with ResNet-18).
func TestBenchRoundLockstepFallsBackWithoutPadding(t *testing.T) {
	cfg := RoundConfig{Clients: 2, TrainSamples: 12, Participants: 2, Epochs: 1, Batch: 4, EvalBatch: 8,
		Rounds: 1, Opt: model.SGD{LR: 0.01}, Seed: 1, Lockstep: true, EvenSizes: true,
		Spec: model.ModelSpec{Arch: model.ArchResNet18, InputShape: []int{8, 8, 3}, NumClasses: 10}}
	res, err := TimeRound(model.CPUBackend, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lockstep != 0 || !strings.Contains(res.NoLockstep, "pads batches") || !strings.Contains(res.NoLockstep, model.ArchResNet18) {
		t.Errorf("lockstep %d, reason %q: want none, with the reason naming the model", res.Lockstep, res.NoLockstep)
	}
	if res.RoundSeconds <= 0 || res.RoundSamples != 12 {
		t.Errorf("round not trained: %+v", res)
	}
	cfg.Spec = model.ModelSpec{}
	cfg.Clients, cfg.TrainSamples, cfg.Participants, cfg.Batch = 3, 60, 3, 16
	if res, err = TimeRound(model.CPUBackend, cfg); err != nil || res.Lockstep != 3 || res.NoLockstep != "" {
		t.Errorf("cnn4 in lockstep: %d clients a step, reason %q, err %v; want 3, none", res.Lockstep, res.NoLockstep, err)
	}
}

// TestDrawnLockstepSteps checks the steps of a lockstep round against model.BatchPlan and the
// mean of its largest participant's steps over random draws against exact expectations.
func TestDrawnLockstepSteps(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 31, 32, 33, 100} {
		if got, want := clientSteps(n, 5, 32), len(model.BatchPlan(n, 5, 32, r)); got != want {
			t.Errorf("clientSteps(%d, 5, 32) = %d; model.BatchPlan makes %d", n, got, want)
		}
	}
	sizes := []int{32, 64, 96, 128} // 1, 2, 3 and 4 steps of one epoch at batch 32
	for _, c := range []struct {
		k       int
		want    float64
		exactly bool
	}{
		{4, 4, true},         // every client, every draw
		{1, 2.5, false},      // one client: the mean
		{2, 20.0 / 6, false}, // the six pairs' maxima 2, 3, 4, 3, 4, 4
		{5, 0, true},         // more than there are: none
	} {
		got := drawnLockstepSteps(sizes, c.k, 1, 32, 3)
		if c.exactly && got != c.want || !c.exactly && math.Abs(got-c.want) > 0.1 {
			t.Errorf("drawnLockstepSteps(k=%d) = %v; want %v", c.k, got, c.want)
		}
	}
	if got := drawnLockstepSteps([]int{50, 50, 50}, 2, 5, 32, 3); got != 10 {
		t.Errorf("even sizes: %v steps; want 10", got)
	}
	if a, b := drawnLockstepSteps(sizes, 2, 1, 32, 3), drawnLockstepSteps(sizes, 2, 1, 32, 3); a != b {
		t.Errorf("same seed, %v then %v", a, b)
	}
	res := RoundResult{RoundSeconds: 1, LockstepSteps: 85, DrawnLockstepSteps: 230}
	if got := res.DrawnRoundSeconds(); math.Abs(got-230.0/85) > 1e-12 {
		t.Errorf("drawn round %v s; want %v", got, 230.0/85)
	}
}
