package methods

import (
	"math"
	"slices"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// logreg2 is a logistic regression on 2 features and 2 classes with the given weight
// ([in, out] row-major) and bias.
func logreg2(w, b []float32) tensor.List {
	return tensor.List{{Name: "classifier.weight", Shape: []int{2, 2}, Data: w}, {Name: "classifier.bias", Shape: []int{2}, Data: b}}
}

// TestAPFLFLBenchAlpha: v − w = (1, 1), g_v = (0.2, 0.4), g_w = (1, −1), α = 0.5:
// Σ (v − w)·(α g_v + (1−α) g_w) = 1·0.6 + 1·(−0.3) = 0.3, plus 0.02·0.5 = 0.31; with
// step 0.1, α = 0.5 − 0.031 = 0.469; with step 10, 0.5 − 3.1 clips to 0.
func TestAPFLFLBenchAlpha(t *testing.T) {
	one := func(a, b float32) tensor.List {
		return tensor.List{{Name: "p", Shape: []int{2}, Data: []float32{a, b}}}
	}
	v, w, gv, gw := one(1, 2), one(0, 1), one(0.2, 0.4), one(1, -1)
	if got := updateAlpha(0.5, 0.1, v, w, gv, gw); math.Abs(float64(got)-0.469) > 1e-6 {
		t.Errorf("alpha %v, want 0.469", got)
	}
	if got := updateAlpha(0.5, 10, v, w, gv, gw); got != 0 {
		t.Errorf("alpha %v, want clipped to 0", got)
	}
}

// TestAPFLFLBenchDoubleStep: one batch, one epoch, momentum μ = 0.7, lr 0.1. The global
// model takes two SGD steps with the gradient g at its starting point: buf = g, then
// μ·g + g, so w = w0 − lr·(2 + μ)·g. Alpha adapts in the first epoch, so it moves.
func TestAPFLFLBenchDoubleStep(t *testing.T) {
	spec := model.ModelSpec{Arch: model.ArchLogReg, InputShape: []int{2}, NumClasses: 2}
	m, err := model.NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	x, y := []float32{2, -1, 0.5, 1}, []int32{0, 1}
	opt := model.SGD{LR: 0.1, Momentum: 0.7}
	l := train.NewLocal(train.LocalConfig{Model: m, Optimizer: opt, TrainX: x, TrainY: y, Epochs: 1, BatchSize: 2, Seed: 1, Round: 1, Rounds: 1})
	w0 := logreg2([]float32{0.1, -0.2, 0.3, 0.05}, []float32{0, 0.1})
	meth := buildMethod(t, "apfl", nil, map[string]string{"impl": "flbench"})
	st := &train.State{Global: w0}
	meth.Init(st, 1)
	u, err := meth.Train(l, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Gradient(w0, x, y)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range u.Params {
		for j, got := range tt.Data {
			want := w0[i].Data[j] - 0.1*2.7*g[i].Data[j]
			if math.Abs(float64(got-want)) > 1e-6 {
				t.Errorf("%s[%d] = %v, want %v", tt.Name, j, got, want)
			}
		}
	}
	if a := st.Method.(*apflState).Alpha[0]; a == 0.5 || a < 0 || a > 1 {
		t.Errorf("alpha %v after the first epoch", a)
	}
}

// TestMixedGradient: logreg with zero weights on x = (2, −1), label 0, scale 0.5 and
// offset (0, ln 3): the mixed logits are the offset, softmax (1/4, 3/4), so dz =
// 0.5·((1/4, 3/4) − (1, 0)) = (−3/8, 3/8); the weight gradient is x ⊗ dz and the bias
// gradient dz.
func TestMixedGradient(t *testing.T) {
	m, err := model.NewModel("", model.ModelSpec{Arch: model.ArchLogReg, InputShape: []int{2}, NumClasses: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	g, err := m.MixedGradient(logreg2(make([]float32, 4), make([]float32, 2)), []float32{2, -1}, []int32{0}, 0.5, []float32{0, float32(math.Log(3))})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float32{"classifier.weight": {-0.75, 0.75, 0.375, -0.375}, "classifier.bias": {-0.375, 0.375}}
	for _, tt := range g {
		for j, v := range tt.Data {
			if math.Abs(float64(v-want[tt.Name][j])) > 1e-6 {
				t.Errorf("%s = %v, want %v", tt.Name, tt.Data, want[tt.Name])
				break
			}
		}
	}
}

// TestAPFLFLBenchOutputMix: v's logits are (0, 2) and w's (2, 0) (biases only); with α =
// 0.25 the mixed logits are (1.5, 0.5): class 0, loss log(1 + e^−1) = 0.313262 for label 0
// and 1.313262 for label 1, so accuracy 1/2 and mean loss 0.813262.
func TestAPFLFLBenchOutputMix(t *testing.T) {
	m, err := model.NewModel("", model.ModelSpec{Arch: model.ArchLogReg, InputShape: []int{2}, NumClasses: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	v, w := logreg2(make([]float32, 4), []float32{0, 2}), logreg2(make([]float32, 4), []float32{2, 0})
	ev := outputMix{m: m, alpha: []float32{0.25}, v: []tensor.List{v}, w: []tensor.List{w}}
	got, err := ev.Evaluate(0, []float32{1, 1, -1, 3}, []int32{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if got.Accuracy != 0.5 || math.Abs(got.Loss-0.813262) > 1e-5 || got.Samples != 2 {
		t.Errorf("got %+v, want accuracy 0.5, loss 0.813262", got)
	}
}

// TestAPFLFLBenchRun: a federated run with impl flbench trains and evaluates with the
// mixed outputs; alpha stays in [0, 1] and the default stays the paper's.
func TestAPFLFLBenchRun(t *testing.T) {
	st, _ := runMLP(t, "apfl", nil, map[string]string{"impl": "flbench"}, 2)
	for c, a := range st.Method.(*apflState).Alpha {
		if a < 0 || a > 1 {
			t.Errorf("client %d: alpha %v", c, a)
		}
	}
	if len(st.Metrics) == 0 {
		t.Error("no evaluation")
	}
	if _, ok := buildMethod(t, "apfl", nil, nil).(apfl); !ok {
		t.Error("apfl's default is not the paper variant")
	}
}

// TestAPFLFLBenchBatchNormTrainMode: on a ResNet-18, one batch of one epoch. FL-bench runs
// every forward pass in train mode (src/client/apfl.py:53,59-60): w's running statistics
// move twice, first on w0, then on the stepped w1 (whose train-mode logits, with batch
// statistics, make v's offset), and v's once; trainable tensors are stepped as
// TestAPFLFLBenchDoubleStep says, v by lr times its mixed gradient.
func TestAPFLFLBenchBatchNormTrainMode(t *testing.T) {
	spec, m := tinyResNet(t)
	const n = 6
	x := waveImages(n, math.Cos, 0.29, 0.2)
	opt := model.SGD{LR: 0.05, Momentum: 0.7}
	cfg := train.LocalConfig{Model: m, Optimizer: opt, TrainX: x, TrainY: []int32{0, 1, 2, 0, 1, 2},
		Epochs: 1, BatchSize: 8, Seed: 3, Round: 1, Rounds: 1}
	w0 := spec.Init(8)
	v0, alpha, u := apflTrainOnce(t, w0, cfg, map[string]string{"impl": "flbench"})
	xb, yb := onlyBatch(t, cfg)
	gw, err := m.Gradient(w0, xb, yb)
	if err != nil {
		t.Fatal(err)
	}
	// step is θ − lr·g on the trained tensors of θ, with the running statistics of stats.
	step := func(theta, g, stats tensor.List) tensor.List {
		out := theta.Clone()
		setStats(out, stats)
		for i, p := range out {
			if !model.IsRunningStat(p.Name) {
				for j := range p.Data {
					p.Data[j] -= opt.LR * g[i].Data[j]
				}
			}
		}
		return out
	}
	w1 := step(w0, gw, m.BatchStats())
	vAfter := func(logits []float32) tensor.List {
		offset := make([]float32, len(logits))
		for i, z := range logits {
			offset[i] = (1 - alpha) * z
		}
		gv, err := m.MixedGradient(v0, xb, yb, alpha, offset)
		if err != nil {
			t.Fatal(err)
		}
		return step(v0, gv, m.BatchStats())
	}
	evalLogits, err := m.Logits(w1, xb, len(yb))
	if err != nil {
		t.Fatal(err)
	}
	vEval := vAfter(evalLogits)
	trainLogits, err := m.TrainLogits(w1, xb, yb)
	if err != nil {
		t.Fatal(err)
	}
	stats2 := slices.Clone(m.BatchStats())
	vTrain := vAfter(trainLogits)

	near := func(a, b []float32) bool {
		for i := range a {
			if math.Abs(float64(a[i]-b[i])) > 1e-5*(1+math.Abs(float64(b[i]))) {
				return false
			}
		}
		return true
	}
	offEval := false
	for i, p := range u.Params {
		if model.IsRunningStat(p.Name) {
			if !slices.Equal(p.Data, stats2[stats2.Find(p.Name)].Data) {
				t.Errorf("w's %s is not the second forward pass's update", p.Name)
			}
			continue
		}
		want := make([]float32, len(p.Data))
		for j := range want {
			want[j] = w0[i].Data[j] - opt.LR*(2+opt.Momentum)*gw[i].Data[j]
		}
		if !near(p.Data, want) {
			t.Errorf("w's %s is not w0 − lr·(2 + μ)·g", p.Name)
		}
	}
	for i, p := range u.Personal {
		if !near(p.Data, vTrain[i].Data) {
			t.Errorf("v's %s is not the step of the train-mode mixture", p.Name)
		}
		offEval = offEval || !near(p.Data, vEval[i].Data)
	}
	if !offEval {
		t.Error("v is the same with evaluation-mode logits: the test cannot tell the modes apart")
	}
}
