package methods

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FL-bench's FedDPA selection, by hand. fc.weight's Fisher 1, 3, 5, 9 normalizes (min 1,
// max 9) to 0, 0.25, 0.5, 1; torch.quantile at 0.4: h = 3·0.4 = 1.2, so 0.25 + 0.2·0.25 =
// 0.3, and the entries above it are the last two. classifier.bias's Fisher is constant:
// FL-bench's min-max gives NaN, which selects nothing and zeroes the tensor. BatchNorm
// running statistics are all the client's own.
func TestFedDPAFLBenchMask(t *testing.T) {
	fisher := tensor.List{
		{Name: "fc.weight", Shape: []int{4}, Data: []float32{5, 1, 9, 3}},
		{Name: "classifier.bias", Shape: []int{2}, Data: []float32{2, 2}},
		{Name: "bn.running_mean", Shape: []int{2}, Data: []float32{0, 7}},
	}
	mask, zero := dpaMask(fisher, 0.4)
	if want := []float32{1, 0, 1, 0}; !reflect.DeepEqual(mask[0].Data, want) {
		t.Errorf("fc.weight mask %v, want %v", mask[0].Data, want)
	}
	if !reflect.DeepEqual(mask[1].Data, []float32{0, 0}) || !reflect.DeepEqual(zero, []bool{false, true, false}) {
		t.Errorf("constant tensor: mask %v, zero %v", mask[1].Data, zero)
	}
	if !reflect.DeepEqual(mask[2].Data, []float32{1, 1}) {
		t.Errorf("running statistics mask %v, want all personal", mask[2].Data)
	}
}

// Under impl flbench, client 0's Fisher is taken at the model the previous client trained
// (Held), not at its own last model: with no local epochs, its start (and upload) is its
// own model merged into the global one by the mask of the Fisher at Held, and Held becomes
// that model. The Fisher at its own model would select differently.
func TestFedDPAFLBenchFisherAtHeldModel(t *testing.T) {
	cfg, m, init, perturb := dpaFixture(t)
	held, own := perturb(1), perturb(2.7)
	f := newFedDPAImpl(&FedDPAParams{Q: 0.4, Impl: "flbench", Workers: 1}).(*fedDPAFL)
	st := &train.State{Global: init.Clone()}
	f.Init(st, 2)
	st.Method.(*fedDPAFLState).Own[0] = own
	st.Method.(*fedDPAFLState).Held[0] = held
	trainX, trainY := cfg.Data.Gather(cfg.Assign.Train[0])
	l := train.NewLocal(train.LocalConfig{Model: m, Optimizer: gomlxSGD(cfg), TrainX: trainX, TrainY: trainY, BatchSize: 4})
	u, err := f.Train(l, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	fiHeld, err := l.Fisher(held)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := dpaMask(fiHeld, 0.4)
	if !reflect.DeepEqual(u.NextMask, want) {
		t.Fatal("the mask is not the one of the Fisher at the held model")
	}
	if got, w := u.Params, merge(init, own, want); !reflect.DeepEqual(got, w) {
		t.Fatal("the start is not the own model merged by that mask")
	}
	if !reflect.DeepEqual(st.Method.(*fedDPAFLState).Held[0], u.Params) {
		t.Error("the held model is not the client's trained model")
	}
	fiOwn, err := l.Fisher(own)
	if err != nil {
		t.Fatal(err)
	}
	if other, _ := dpaMask(fiOwn, 0.4); reflect.DeepEqual(other, want) {
		t.Error("the Fisher at the own model selects the same entries: the test cannot tell them apart")
	}
	if got := st.Method.(*fedDPAFLState).Own[0]; !reflect.DeepEqual(got, u.Params) {
		t.Error("the worker's copy of the client's model is not its trained model")
	}

	// Two workers, each with its own copy of every client's model: served by worker 1,
	// which never trained it, client 0's own values are the initial model's, whatever
	// worker 0 holds for it.
	f2 := newFedDPAImpl(&FedDPAParams{Q: 0.4, Impl: "flbench", Workers: 2}).(*fedDPAFL)
	st2 := &train.State{Global: init.Clone()}
	f2.Init(st2, 2)
	s2 := st2.Method.(*fedDPAFLState)
	s2.Own[0], s2.Held[1] = own, held // worker 0's copy of client 0; worker 1's last model
	f2.assign, f2.assignRound = map[int]int{0: 1}, l.Round()
	u2, err := f2.Train(l, st2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, w := u2.Params, merge(init, init, want); !reflect.DeepEqual(got, w) {
		t.Error("worker 1 did not start client 0 from its own copy (the initial model)")
	}
	if s2.Own[1*2+0] == nil || s2.Own[0] == nil || !reflect.DeepEqual(s2.Own[0], own) {
		t.Error("worker 1's training of client 0 must fill worker 1's copy and leave worker 0's")
	}
	if (&fedDPAFL{}).ConcurrentClients() {
		t.Error("flbench FedDPA must train a worker's clients one after another")
	}
	cfg.Run.Train.Rounds = 2
	end, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if end.Method.(*fedDPAFLState).Held[0] == nil {
		t.Error("a run kept no held model")
	}
}

// Under impl flbench, FedDPA takes the Fisher after model.eval() (src/client/feddpa.py:126):
// on a network with BatchNorm, client 0's mask is that of the Fisher with the running
// statistics normalizing (train.Local.WithFrozenBN), not the training-mode one, which
// selects differently here.
func TestFedDPAFLBenchFisherInEvaluationMode(t *testing.T) {
	spec, m := tinyResNet(t)
	init := spec.Init(11)
	held := init.Clone()
	for _, p := range held {
		for i := range p.Data {
			switch {
			case strings.HasSuffix(p.Name, ".running_mean"):
				p.Data[i] = 0.2*float32(i%3) - 0.2
			case strings.HasSuffix(p.Name, ".running_var"):
				p.Data[i] = 2 + 0.5*float32(i%2)
			default:
				p.Data[i] *= float32(1 + 0.5*math.Sin(float64(i+1)))
			}
		}
	}
	x := make([]float32, 6*6*6*3)
	for i := range x {
		x[i] = float32(math.Cos(0.3 * float64(i)))
	}
	l := train.NewLocal(train.LocalConfig{Model: m, Optimizer: model.SGD{LR: 0.01}, TrainX: x,
		TrainY: []int32{0, 1, 2, 2, 1, 0}, BatchSize: 4})
	f := newFedDPAImpl(&FedDPAParams{Q: 0.4, Impl: "flbench", Workers: 1}).(*fedDPAFL)
	st := &train.State{Global: init.Clone()}
	f.Init(st, 1)
	st.Method.(*fedDPAFLState).Held[0] = held
	u, err := f.Train(l, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	eval, err := l.WithFrozenBN().Fisher(held)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := dpaMask(eval, 0.4)
	if !reflect.DeepEqual(u.NextMask, want) {
		t.Fatal("the mask is not the one of the evaluation-mode Fisher at the held model")
	}
	trainMode, err := l.Fisher(held)
	if err != nil {
		t.Fatal(err)
	}
	if other, _ := dpaMask(trainMode, 0.4); reflect.DeepEqual(other, want) {
		t.Error("the training-mode Fisher selects the same entries: the test cannot tell the modes apart")
	}
}

// FL-bench's test pass (src/client/fedavg.py:284-316 through feddpa.py's set_parameters),
// by hand, on two workers and three clients: clients 0 and 1 go to workers 0 and 1, client
// 2 to the worker that finishes first (the smaller training set). Each client is evaluated
// with its testing worker's copy of its model (the initial model where that worker never
// trained it) merged into the global model by the mask of the Fisher at that worker's
// current model, and the worker keeps the merged model, so client 2's Fisher is taken at
// the merged model of the client its worker tested before. A round without an evaluation
// changes nothing.
func TestFedDPAFLBenchTestPass(t *testing.T) {
	cfg, m, _, perturb := dpaFixture(t)
	f := newFedDPAImpl(&FedDPAParams{Q: 0.4, Impl: "flbench", Workers: 2}).(*fedDPAFL)
	const clients = 3
	st := &train.State{Global: perturb(0.3)}
	f.Init(st, clients)
	s := st.Method.(*fedDPAFLState)
	s.Held[0], s.Held[1] = perturb(1), perturb(1.9)
	s.Own[0*clients+0], s.Own[1*clients+2], s.Own[0*clients+2] = perturb(2.7), perturb(3.4), perturb(4.1)
	own := map[[2]int]tensor.List{{0, 0}: s.Own[0], {1, 2}: s.Own[clients+2], {0, 2}: s.Own[2]}
	locals := make([]*train.Local, clients)
	for c := range locals {
		x, y := cfg.Data.Gather(cfg.Assign.Train[c])
		locals[c] = train.NewLocal(train.LocalConfig{Model: m, Optimizer: gomlxSGD(cfg), TrainX: x, TrainY: y,
			BatchSize: 4, Client: c, Evaluates: true})
	}
	second := 0 // the worker client 2 goes to: the one whose client has fewer samples
	if locals[1].TrainSize() < locals[0].TrainSize() {
		second = 1
	}
	expect := func(c, w int, at tensor.List) tensor.List {
		fi, err := locals[c].WithFrozenBN().Fisher(at)
		if err != nil {
			t.Fatal(err)
		}
		mask, _ := dpaMask(fi, 0.4)
		o := own[[2]int{w, c}]
		if o == nil {
			o = s.Init // the run's initial model
		}
		return merge(st.Global, o, mask)
	}
	want0 := expect(0, 0, s.Held[0])
	want1 := expect(1, 1, s.Held[1])
	want2 := expect(2, second, []tensor.List{want0, want1}[second])

	quiet := *locals[0]
	noEval := train.NewLocal(train.LocalConfig{Model: m, TrainX: quiet.TrainX(), TrainY: quiet.TrainY(), BatchSize: 4})
	held0 := s.Held[0]
	if err := f.EndRound(st, 1, func(int) *train.Local { return noEval }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Held[0], held0) || st.Personal[0] != nil {
		t.Fatal("a round without an evaluation ran the test pass")
	}
	if err := f.EndRound(st, 2, func(c int) *train.Local { return locals[c] }); err != nil {
		t.Fatal(err)
	}
	for c, want := range []tensor.List{want0, want1, want2} {
		if !reflect.DeepEqual(f.EvalModel(st, c), want) {
			t.Errorf("client %d's evaluation model is not its testing worker's merged model", c)
		}
	}
	if !reflect.DeepEqual(s.Held[second], want2) || !reflect.DeepEqual(s.Held[1-second], []tensor.List{want0, want1}[1-second]) {
		t.Error("a worker's model after the pass is not the last model it tested")
	}
	if reflect.DeepEqual(want2, expect(2, second, s.Own[0])) {
		t.Error("client 2's model does not depend on its worker's previous test: the test cannot tell")
	}

	// Training client 0 afterwards starts from the Fisher at its worker's last tested model.
	f.assign, f.assignRound = map[int]int{0: second}, 0
	at := s.Held[second]
	u, err := f.Train(&quiet, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := quiet.WithFrozenBN().Fisher(at)
	if err != nil {
		t.Fatal(err)
	}
	if mask, _ := dpaMask(fi, 0.4); !reflect.DeepEqual(u.NextMask, mask) {
		t.Error("training after the test pass did not take the Fisher at the worker's tested model")
	}

	// A tensor the pass zeroed (FL-bench's constant Fisher) stays zero in the evaluation
	// model, through a checkpoint too.
	zeroed := st.Global[0].Name
	s.Zeroed[1] = tensor.List{{Name: zeroed, Shape: []int{1}, Data: []float32{1}}}
	blobs, err := train.EncodeCheckpoint(st)
	if err != nil {
		t.Fatal(err)
	}
	back, err := train.DecodeState(blobs, clients, f)
	if err != nil {
		t.Fatal(err)
	}
	got := f.EvalModel(back, 1)
	if !reflect.DeepEqual(got, f.EvalModel(st, 1)) {
		t.Error("client 1's evaluation model changed through a checkpoint")
	}
	for _, v := range got[got.Find(zeroed)].Data {
		if v != 0 {
			t.Fatalf("the zeroed tensor %s holds %v", zeroed, v)
		}
	}
}

// dpaFixture returns a tiny impl flbench FedDPA run's config, its compiled model (closed
// when t ends), its initial model and perturb(k), the initial model with each entry i
// scaled by 1 + 0.9·sin(k·(i+1)).
func dpaFixture(t *testing.T) (train.Config, *model.Model, tensor.List, func(k float64) tensor.List) {
	t.Helper()
	r, cfg := methodRun(t, "feddpa", nil, map[string]string{"impl": "flbench"})
	spec := train.ModelSpec(r, cfg.Data)
	m, err := model.NewModel(cfg.Backend, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	init := initModel(r, spec)
	perturb := func(k float64) tensor.List {
		p := init.Clone()
		for _, tt := range p {
			for i := range tt.Data {
				tt.Data[i] *= float32(1 + 0.9*math.Sin(k*float64(i+1)))
			}
		}
		return p
	}
	return cfg, m, init, perturb
}
