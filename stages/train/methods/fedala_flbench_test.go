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
	x := make([]float32, n*size)
	for i := range x {
		x[i] = float32(math.Cos(0.3 * float64(i)))
	}
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
