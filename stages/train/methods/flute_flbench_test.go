package methods

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// TestFLUTEFLBenchMovesBatchNormStatistics: FL-bench's FLUTE never trains the body, but its
// forward passes run in train mode, so on a ResNet-18 one local epoch of one batch leaves
// the body's weights as they were and its running statistics at the momentum update of
// that batch (model.Model.BatchStats of the gradient at the starting model).
func TestFLUTEFLBenchMovesBatchNormStatistics(t *testing.T) {
	spec, m := tinyResNet(t)
	global := spec.Init(5)
	const n = 6
	x := waveImages(n, math.Sin, 0.37, 0)
	cfg := train.LocalConfig{Model: m, Optimizer: model.SGD{LR: 0.01, Momentum: 0.5}, TrainX: x,
		TrainY: []int32{0, 1, 2, 2, 1, 0}, Epochs: 1, BatchSize: 8, Seed: 2, Round: 1}
	f := fluteFLBench{lambda1: 1, lambda2: 0.01, lr: 0.1, workers: 1}
	st := &train.State{Global: global.Clone(), Personal: make([]tensor.List, 1)}
	u, err := f.train(train.NewLocal(cfg), st, 0)
	if err != nil {
		t.Fatal(err)
	}
	var want tensor.List
	err = train.NewLocal(cfg).Batches(1, "flute-flbench", func(_ int, bx []float32, by []int32) error {
		if _, err := m.Gradient(global, bx, by); err != nil {
			return err
		}
		want = slices.Clone(m.BatchStats())
		return nil
	})
	if err != nil || len(want) == 0 {
		t.Fatalf("no batch statistics: %v", err)
	}
	for i, p := range u.Params {
		switch {
		case model.IsRunningStat(p.Name):
			w := want[want.Find(p.Name)].Data
			if !reflect.DeepEqual(p.Data, w) || reflect.DeepEqual(p.Data, global[i].Data) {
				t.Errorf("%s is not the batch's momentum update", p.Name)
			}
		case !isClassifier(p.Name) && !reflect.DeepEqual(p.Data, global[i].Data):
			t.Errorf("body tensor %s trained", p.Name)
		}
	}
}
