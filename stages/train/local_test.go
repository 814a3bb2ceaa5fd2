package train

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
)

// bnLocal returns a Local of four samples on a small ResNet-18 (BatchNorm throughout) and
// parameters whose running statistics are unlike any batch's, so that the training and the
// evaluation forward passes differ.
func bnLocal(t *testing.T) (*Local, *model.Model, tensor.List) {
	t.Helper()
	spec := model.ModelSpec{Arch: model.ArchResNet18, InputShape: []int{6, 6, 3}, NumClasses: 3, Width: 2}
	m, err := model.NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	params := spec.Init(5)
	for _, p := range params {
		switch {
		case strings.HasSuffix(p.Name, ".running_mean"):
			for i := range p.Data {
				p.Data[i] = 0.1*float32(i%3) - 0.1
			}
		case strings.HasSuffix(p.Name, ".running_var"):
			for i := range p.Data {
				p.Data[i] = 1.5 + 0.25*float32(i%2)
			}
		}
	}
	x := make([]float32, 4*6*6*3)
	for i := range x {
		x[i] = float32(math.Sin(0.7 * float64(i)))
	}
	l := NewLocal(LocalConfig{Model: m, Optimizer: model.SGD{LR: 0.1}, TrainX: x, TrainY: []int32{0, 2, 1, 2},
		Epochs: 1, BatchSize: 4})
	return l, m, params
}

// TestFisherWithFrozenBN checks the empirical Fisher of a WithFrozenBN Local (FedDPA's as
// FL-bench computes it, after model.eval()): it is the mean over the samples of the square
// of each sample's gradient on the model's FrozenBN sibling, computed in the same order;
// that gradient is the evaluation-mode one, in which a sample's gradient does not depend
// on the batch it is in (the mean of the four single-sample gradients is the gradient of
// the four together, to rounding), which the training-mode pass does not satisfy; and the
// Fisher differs from the training-mode one.
func TestFisherWithFrozenBN(t *testing.T) {
	l, m, params := bnLocal(t)
	fm, err := m.FrozenBN()
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.WithFrozenBN().Fisher(params)
	if err != nil {
		t.Fatal(err)
	}
	n := len(l.data.trainY)
	want := ZeroMask(params)
	mean := map[bool]tensor.List{true: ZeroMask(params), false: ZeroMask(params)}
	for i := range n {
		xi, yi := l.data.trainX[i*108:(i+1)*108], l.data.trainY[i:i+1]
		for _, frozen := range []bool{true, false} {
			mm := m
			if frozen {
				mm = fm
			}
			g, err := mm.Gradient(params, xi, yi)
			if err != nil {
				t.Fatal(err)
			}
			for ti, gt := range g {
				for j, v := range gt.Data {
					if frozen {
						want[ti].Data[j] += v * v / float32(n)
					}
					mean[frozen][ti].Data[j] += v / float32(n)
				}
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("the Fisher of a WithFrozenBN Local is not the mean squared single-sample gradient of the FrozenBN model")
	}
	if l.samples != int64(n) {
		t.Errorf("the frozen Local's work was not counted on the Local: %d samples, want %d", l.samples, n)
	}
	// Batch independence: the evaluation-mode gradient of the batch is the mean of its
	// samples' gradients; the training-mode one is not (its statistics couple the samples).
	for _, frozen := range []bool{true, false} {
		mm := m
		if frozen {
			mm = fm
		}
		g, err := mm.Gradient(params, l.data.trainX, l.data.trainY)
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for ti, gt := range g {
			for j, v := range gt.Data {
				d := math.Abs(float64(v - mean[frozen][ti].Data[j]))
				worst = max(worst, d/(1e-3+math.Abs(float64(v))))
			}
		}
		if frozen && worst > 1e-3 {
			t.Errorf("evaluation mode: the batch's gradient differs from its samples' mean by %.3g (relative)", worst)
		}
		if !frozen && worst < 1e-2 {
			t.Errorf("training mode: the batch's gradient is its samples' mean (worst %.3g): the model cannot tell the modes apart", worst)
		}
	}
	trainMode, err := l.Fisher(params)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(trainMode, got) {
		t.Error("the training-mode Fisher equals the evaluation-mode one")
	}
}

// Fit's zero value is the run's training: its epochs, its learning rate, the "shuffle"
// stream; each field, when set, changes just that; Exactly(0) trains nothing.
func TestFitDefaultsAreTheRuns(t *testing.T) {
	_, ls, spec := lockstepClients(t, 1)
	l, init := ls[0], spec.Init(3)
	fit := func(f Fit) tensor.List {
		t.Helper()
		p, err := l.Fit(init, f)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	same := func(a, b tensor.List) bool { return reflect.DeepEqual(a, b) }
	zero := fit(Fit{})
	if !same(zero, fit(Fit{Epochs: l.Epochs(), LR: l.LR(), Stream: "shuffle"})) {
		t.Error("Fit{} is not the run's epochs, learning rate and shuffle stream")
	}
	if same(zero, init) || same(zero, fit(Fit{Epochs: 1})) || same(zero, fit(Fit{LR: l.LR() / 2})) ||
		same(zero, fit(Fit{Stream: "other"})) {
		t.Error("setting epochs, learning rate or stream changed nothing")
	}
	if none := fit(Fit{Epochs: Exactly(0)}); !same(none, init) {
		t.Error("Exactly(0) trained")
	}
	if !same(fit(Fit{Epochs: Exactly(2)}), fit(Fit{Epochs: 2})) {
		t.Error("Exactly(2) is not 2 epochs")
	}
}

// TestBatchedFisherEqualsFisher checks that the batched Fisher (every sample's squared
// gradient summed inside one graph) is Fisher's per-sample sum to float32 rounding, entry by
// entry and in the same layout, and that both count the client's samples once.
func TestBatchedFisherEqualsFisher(t *testing.T) {
	l, _, params := bnLocal(t)
	frozen := l.WithFrozenBN()
	want, err := frozen.Fisher(params)
	if err != nil {
		t.Fatal(err)
	}
	got, err := frozen.BatchedFisher(params)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d tensors, want %d", len(got), len(want))
	}
	nonzero := 0
	for k := range want {
		if got[k].Name != want[k].Name || len(got[k].Data) != len(want[k].Data) {
			t.Fatalf("tensor %d: %s of %d entries, want %s of %d", k, got[k].Name, len(got[k].Data), want[k].Name, len(want[k].Data))
		}
		for j, w := range want[k].Data {
			g := got[k].Data[j]
			if w != 0 {
				nonzero++
			}
			if d := math.Abs(float64(g - w)); d > 1e-5*math.Max(1, math.Abs(float64(w))) {
				t.Fatalf("%s[%d]: batched %g, per-sample %g", want[k].Name, j, g, w)
			}
		}
	}
	if nonzero == 0 {
		t.Fatal("the Fisher is zero everywhere: the comparison shows nothing")
	}
}
