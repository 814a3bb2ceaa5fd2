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

func TestAPFL(t *testing.T) {
	zero, _ := run(t, "apfl", map[string]float64{"alpha": 0, "alpha_lr": 0}, 3)
	avg, _ := run(t, "fedavg", nil, 3)
	if !reflect.DeepEqual(zero.Global, avg.Global) || !reflect.DeepEqual(zero.Metrics, avg.Metrics) {
		t.Error("APFL with alpha fixed at 0 differs from FedAvg")
	}
	learned, cfg := run(t, "apfl", map[string]float64{"alpha": 0.5, "alpha_lr": 0.05}, 3)
	moved := false
	for c, v := range learned.Method.(*apflState).Alpha {
		if v < 0 || v > 1 {
			t.Errorf("client %d: alpha %v outside [0, 1]", c, v)
		}
		moved = moved || v != 0.5
	}
	if !moved {
		t.Error("alpha never moved from 0.5")
	}
	if reflect.DeepEqual(learned.Personal[0], initModel(cfg.Run, train.ModelSpec(cfg.Run, cfg.Data))) &&
		reflect.DeepEqual(learned.Personal[1], learned.Personal[0]) {
		t.Error("personal models never trained")
	}
}

// TestAPFLPaperBatchNormRunningStats: on a ResNet-18, one batch. The paper variant's v
// runs only inside the mixture v̄ = α·v + (1−α)·w, so its running statistics are the
// ones v̄'s training-mode forward pass on the batch moved them to; before, they stayed
// at the initial model's for good.
func TestAPFLPaperBatchNormRunningStats(t *testing.T) {
	spec, m := tinyResNet(t)
	const n = 6
	x := waveImages(n, math.Sin, 0.37, 0.3)
	cfg := train.LocalConfig{Model: m, Optimizer: model.SGD{LR: 0.05, Momentum: 0.7},
		TrainX: x, TrainY: []int32{0, 1, 2, 0, 1, 2}, Epochs: 1, BatchSize: 8, Seed: 5, Round: 1, Rounds: 1}
	w0 := spec.Init(4)
	v0, alpha, u := apflTrainOnce(t, w0, cfg, map[string]string{"alpha": "0.4"})
	xb, yb := onlyBatch(t, cfg)
	if _, err := m.Gradient(mix(alpha, v0, w0), xb, yb); err != nil {
		t.Fatal(err)
	}
	want := m.BatchStats()
	if len(want) == 0 {
		t.Fatal("a ResNet-18 reports no running statistics")
	}
	for _, s := range want {
		got := u.Personal[u.Personal.Find(s.Name)].Data
		if !slices.Equal(got, s.Data) {
			t.Errorf("v's %s is not the mixture's forward pass's update", s.Name)
		}
		if slices.Equal(got, v0[v0.Find(s.Name)].Data) {
			t.Errorf("v's %s never moved", s.Name)
		}
	}
}

// apflTrainOnce builds apfl with options, starts one client at w0 and trains it once on
// cfg: the client's personal model and α before, and the upload.
func apflTrainOnce(t *testing.T, w0 tensor.List, cfg train.LocalConfig, options map[string]string) (tensor.List, float32, train.Upload) {
	t.Helper()
	meth := buildMethod(t, "apfl", nil, options)
	st := &train.State{Global: w0.Clone()}
	meth.Init(st, 1)
	v0, alpha := st.Personal[0].Clone(), st.Method.(*apflState).Alpha[0]
	u, err := meth.Train(train.NewLocal(cfg), st, 0)
	if err != nil {
		t.Fatal(err)
	}
	return v0, alpha, u
}
