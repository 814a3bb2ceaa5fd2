package methods

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/rng"
	"github.com/fedpipe/fedpipe/stages/train"
)

// TestFedALAFLBenchLearnsWInEvaluationMode: on a ResNet-18, whose BatchNorm normalizes
// differently in training and in evaluation, one pass of W on a started worker (all six
// samples in one batch) follows the cross-entropy gradient taken with BatchNorm in
// evaluation mode, as FL-bench's copy of a model its evaluate() left in eval mode does
// (alaFLBench); the training-mode gradient would give another θ̂.
func TestFedALAFLBenchLearnsWInEvaluationMode(t *testing.T) {
	spec, m := tinyResNet(t)
	perturb := func(p tensor.List, phase float64) tensor.List {
		for _, q := range p {
			for i := range q.Data {
				switch {
				case strings.HasSuffix(q.Name, ".running_mean"):
					q.Data[i] = 0.2*float32(i%3) - 0.2 + float32(phase)/10
				case strings.HasSuffix(q.Name, ".running_var"):
					q.Data[i] = 2 + 0.5*float32(i%2) + float32(phase)
				default:
					q.Data[i] = q.Data[i]*float32(1+0.5*math.Sin(float64(i+1)+phase)) + 0.05*float32(math.Cos(float64(i)+phase))
				}
			}
		}
		return p
	}
	global := perturb(spec.Init(11), 0)
	own := perturb(spec.Init(11), 1)
	const n, size = 6, 6 * 6 * 3
	x := waveImages(n, math.Cos, 0.3, 0)
	l := train.NewLocal(train.LocalConfig{Model: m, Optimizer: model.SGD{LR: 0.01}, TrainX: x,
		TrainY: []int32{0, 1, 2, 2, 1, 0}, BatchSize: 8, Seed: 3, Round: 4, Client: 0})
	a := newFedALA(&FedALAParams{Eta: 1, RandPercent: 100, LayerIdx: 1, Threshold: 0.1, NumPreLoss: 10,
		MaxInitEpochs: 20, Impl: "flbench", Workers: 1}).(*alaFLBench)
	st := &train.State{Global: global}
	a.Init(st, 1)
	st.Method.(*fedALAState).Workers[0] = append(own.Clone(), tensor.Tensor{Name: alaStarted, Shape: []int{1}, Data: []float32{1}})
	got, err := a.serve(l, st, 0, "fedala-sample")
	if err != nil {
		t.Fatal(err)
	}

	// By hand: the lower layers are the global model's; the top layer (the classifier)
	// starts at θ + (θ_g − θ)·1, and one batch of all samples in the stream's order moves
	// W = 1 to clip(1 − g ⊙ (θ_g − θ), 0, 1).
	isTop := func(name string) bool { return strings.HasPrefix(name, "classifier.") }
	start := global.Clone()
	for i, p := range start {
		if isTop(p.Name) {
			o := own[own.Find(p.Name)].Data
			for j, g := range global[i].Data {
				p.Data[j] = o[j] + (g-o[j])*1
			}
		}
	}
	bx, by := gatherBatch(l, rng.New(l.Seed(), l.Round(), l.Client(), "fedala-sample").Perm(n), size)
	after := func(lm *train.Local) tensor.List {
		g, _, err := crossEntropyGradient(lm, start, bx, by)
		if err != nil {
			t.Fatal(err)
		}
		out := start.Clone()
		for i, p := range out {
			if !isTop(p.Name) {
				continue
			}
			o, gl, gr := own[own.Find(p.Name)].Data, global[i].Data, g[g.Find(p.Name)].Data
			for j := range p.Data {
				w := min(max(1-gr[j]*(gl[j]-o[j]), 0), 1)
				p.Data[j] = o[j] + (gl[j]-o[j])*w
			}
		}
		return out
	}
	want := after(l.WithFrozenBN())
	if !reflect.DeepEqual(got, want) {
		t.Fatal("θ̂ is not the one of W learned with BatchNorm in evaluation mode")
	}
	if reflect.DeepEqual(after(l), want) {
		t.Error("the training-mode gradient gives the same θ̂: the test cannot tell the modes apart")
	}
}

// TestFedALAFLBenchRestoresClientMomentum: FL-bench's FedALA loads the optimizer state the
// server keeps for the client (src/client/fedala.py:38-41, src/utils/trainer.py:57-59), so
// a client's second training starts from the momentum buffers its first ended with. One
// worker, one client: its first job learns nothing (θ̂ = θ_g), so training starts from θ_g
// both times, and each training is checked against a session by hand.
func TestFedALAFLBenchRestoresClientMomentum(t *testing.T) {
	spec, m := tinyResNet(t)
	const n = 6
	x := waveImages(n, math.Sin, 0.23, 0.1)
	opt := model.SGD{LR: 0.05, Momentum: 0.7}
	cfg := func(round int) train.LocalConfig {
		return train.LocalConfig{Model: m, Optimizer: opt, TrainX: x, TrainY: []int32{2, 0, 1, 1, 0, 2},
			Epochs: 1, BatchSize: 4, Seed: 7, Round: round, Rounds: 2}
	}
	a := newFedALA(&FedALAParams{Eta: 1, RandPercent: 80, LayerIdx: 1, Threshold: 0.1, NumPreLoss: 10,
		MaxInitEpochs: 20, Impl: "flbench", Workers: 1}).(*alaFLBench)
	st := &train.State{Global: spec.Init(5)}
	a.Init(st, 1)
	// byHand trains from p with momentum buffers mom (nil: zero) on round's batches.
	byHand := func(round int, p, mom tensor.List) (tensor.List, tensor.List) {
		s, err := m.NewSession(p, opt)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if mom != nil {
			if err := s.SetMomentum(mom); err != nil {
				t.Fatal(err)
			}
		}
		if err := train.NewLocal(cfg(round)).Batches(1, "shuffle", func(_ int, bx []float32, by []int32) error {
			_, err := s.Step(bx, by)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		out, err := s.Params()
		if err != nil {
			t.Fatal(err)
		}
		buf, err := s.Momentum()
		if err != nil {
			t.Fatal(err)
		}
		return out, buf
	}
	moms := st.Method.(*fedALAState).Moms
	if moms[0] != nil {
		t.Fatal("a client holds momentum before it trained")
	}
	u1, err := a.Train(train.NewLocal(cfg(1)), st, 0)
	if err != nil {
		t.Fatal(err)
	}
	want1, mom1 := byHand(1, st.Global, nil)
	if !reflect.DeepEqual(u1.Params, want1) || !reflect.DeepEqual(moms[0], mom1) {
		t.Fatal("the first training is not plain SGD from zero momentum, or its buffers were not kept")
	}
	st.Global = u1.Params // the round's FedAvg of one client
	u2, err := a.Train(train.NewLocal(cfg(2)), st, 0)
	if err != nil {
		t.Fatal(err)
	}
	want2, mom2 := byHand(2, st.Global, mom1)
	if !reflect.DeepEqual(u2.Params, want2) || !reflect.DeepEqual(moms[0], mom2) {
		t.Error("the second training does not resume the client's momentum buffers")
	}
	if fresh, _ := byHand(2, st.Global, nil); reflect.DeepEqual(fresh, want2) {
		t.Error("zero momentum gives the same model: the test cannot tell them apart")
	}
}
