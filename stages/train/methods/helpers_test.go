package methods

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
	"github.com/fedpipe/fedpipe/stages/rng"
	"github.com/fedpipe/fedpipe/stages/train"
)

// tinyRun is a 4-round logistic-regression run of method on 6 Synthetic clients (the
// train package's tests use the same).
func tinyRun(method string) (*manifest.Run, *data.Dataset, *partition.Assignment) {
	ds := data.Synthetic(data.SyntheticParams{Alpha: 0.5, Beta: 0.5, Devices: 6, Features: 60, Classes: 10})
	r := &manifest.Run{MethodName: method, Method: method, Seed: 3, Dataset: manifest.DatasetSpec{Name: "synthetic"},
		Partition: manifest.PartitionSpec{Scheme: "natural", Clients: 6, TestFraction: 0.25},
		Model:     manifest.ModelSpec{Arch: "logreg"},
		Train: manifest.TrainSpec{Rounds: 4, Participation: 0.5, LocalEpochs: 1, BatchSize: 16, LR: 0.05,
			Momentum: 0.5, EvalEvery: 2, CheckpointEvery: 1}}
	a, err := partition.Make(ds, r.Dataset, r.Partition, r.Seed)
	if err != nil {
		panic(err)
	}
	return r, ds, a
}

func run(t *testing.T, method string, params map[string]float64, rounds int) (*train.State, train.Config) {
	t.Helper()
	_, cfg := methodRun(t, method, params, nil)
	cfg.Run.Train.Rounds = rounds
	st, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st, cfg
}

// tensorsOf returns the tensors of l whose names satisfy keep.
func tensorsOf(l tensor.List, keep func(string) bool) tensor.List {
	var out tensor.List
	for _, t := range l {
		if keep(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// methodRun is tinyRun with the method's catalogue defaults and the given overrides.
func methodRun(t *testing.T, method string, params map[string]float64, options map[string]string) (*manifest.Run, train.Config) {
	t.Helper()
	r, ds, a := tinyRun(method)
	r.Params, r.Options = manifest.DefaultParams(method)
	for k, v := range params {
		r.Params[k] = v
	}
	for k, v := range options {
		r.Options[k] = v
	}
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	return r, train.Config{Run: r, Data: ds, Assign: a, Backend: backend}
}

// snapshots runs cfg and returns the masks after every round.
func snapshots(t *testing.T, cfg train.Config) (*train.State, [][]tensor.List) {
	t.Helper()
	var snaps [][]tensor.List
	cfg.Run.Train.CheckpointEvery = 1
	cfg.Checkpoint = func(st *train.State) error {
		masks := make([]tensor.List, len(st.Masks))
		for c, m := range st.Masks {
			masks[c] = m.Clone()
		}
		snaps = append(snaps, masks)
		return nil
	}
	st, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st, append(snaps, st.Masks)
}

// initModel is the run's initial model (train.InitialModel) for the model spec.
func initModel(r *manifest.Run, spec model.ModelSpec) tensor.List {
	p, err := train.InitialModel(r, spec)
	if err != nil {
		panic(err)
	}
	return p
}

// runMLP is run with an MLP (hidden width 8), so that a body and a head both exist.
func runMLP(t *testing.T, method string, params map[string]float64, options map[string]string, rounds int) (*train.State, train.Config) {
	t.Helper()
	_, cfg := methodRun(t, method, params, options)
	cfg.Run.Model.Arch, cfg.Run.Model.Hidden = "mlp", []int{8}
	cfg.Run.Train.Rounds = rounds
	st, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st, cfg
}

// gomlxModel compiles the model of a test run.
func gomlxModel(cfg train.Config) (*model.Model, error) {
	return model.NewModel(cfg.Backend, train.ModelSpec(cfg.Run, cfg.Data))
}

func gomlxSGD(cfg train.Config) model.SGD {
	t := cfg.Run.Train
	return model.SGD{LR: float32(t.LR), Momentum: float32(t.Momentum), WeightDecay: float32(t.WeightDecay)}
}

func rngForTest() *rand.Rand { return rng.New(1, 1, 1, "test") }

// tinyResNet compiles a ResNet-18 of width 2 on 6×6×3 inputs and 3 classes (BatchNorm
// everywhere, so training and evaluation modes differ), closed when the test ends.
func tinyResNet(t *testing.T) (model.ModelSpec, *model.Model) {
	t.Helper()
	spec := model.ModelSpec{Arch: model.ArchResNet18, InputShape: []int{6, 6, 3}, NumClasses: 3, Width: 2}
	m, err := model.NewModel("", spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return spec, m
}

// onlyBatch returns the one batch of cfg's first epoch, shuffled as a method's Train sees it
// (cfg.BatchSize at least the training set).
func onlyBatch(t *testing.T, cfg train.LocalConfig) ([]float32, []int32) {
	t.Helper()
	var xb []float32
	var yb []int32
	n := 0
	if err := train.NewLocal(cfg).Batches(1, "shuffle", func(_ int, bx []float32, by []int32) error {
		xb, yb = bx, by
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d batches of %d samples, want 1", n, cfg.BatchSize)
	}
	return xb, yb
}

// waveImages returns n images of tinyResNet's shape (6×6×3), value i of them
// wave(freq·i) + offset.
func waveImages(n int, wave func(float64) float64, freq, offset float64) []float32 {
	x := make([]float32, n*6*6*3)
	for i := range x {
		x[i] = float32(wave(freq*float64(i))) + float32(offset)
	}
	return x
}
