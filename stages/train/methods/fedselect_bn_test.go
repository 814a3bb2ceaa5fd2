package methods

import (
	"math"
	"slices"
	"testing"

	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// TestFedSelectOfficialFreezesBatchNorm trains one client of a tiny ResNet-18 with
// fedselect in round 1 and in round 2 from the same model. bn_train official (the official
// variant's default): round 1 trains in train mode (the running statistics move), round 2
// with BatchNorm frozen — the running statistics come back bit for bit as they went in
// while the trained tensors move (model.TestFrozenBNSession checks that such training
// normalizes with the running statistics), and the samples are counted on the client's
// Local. Variant paper (bn_train auto → always) and bn_train always on the
// official variant move the statistics in round 2 too.
func TestFedSelectOfficialFreezesBatchNorm(t *testing.T) {
	spec, m := tinyResNet(t)
	start := spec.Init(9)
	const n = 8
	x := waveImages(n, math.Cos, 0.7, 0)
	y := []int32{0, 1, 2, 0, 1, 2, 0, 1}
	statsMoved := func(variant, bnTrain string, round int) bool {
		t.Helper()
		p := &FedSelectParams{Variant: variant, Alpha: 0.5, GrowEvery: 3, BNTrain: bnTrain, Accuracy: "auto"}
		f := newFedSelect(p)
		st := &train.State{Global: start.Clone()}
		f.Init(st, 1)
		l := train.NewLocal(train.LocalConfig{Model: m, Optimizer: model.SGD{LR: 0.05}, TrainX: x, TrainY: y,
			Epochs: 1, BatchSize: 4, Seed: 1, Round: round, Rounds: 5})
		u, err := f.Train(l, st, 0)
		if err != nil {
			t.Fatal(err)
		}
		moved := false
		for i, p := range u.Params {
			same := slices.Equal(p.Data, start[i].Data)
			if model.IsRunningStat(p.Name) {
				moved = moved || !same
			} else if same && p.Name == "conv1.weight" {
				t.Errorf("%s/%s round %d: conv1.weight did not train", variant, bnTrain, round)
			}
		}
		if w := l.TakeWork(round); w.Samples != n {
			t.Errorf("%s/%s round %d: %d samples counted, want %d", variant, bnTrain, round, w.Samples, n)
		}
		return moved
	}
	for _, tc := range []struct {
		variant, bnTrain string
		round            int
		moved            bool
	}{
		{"official", "auto", 1, true},
		{"official", "auto", 2, false},
		{"official", "official", 3, false},
		{"official", "always", 2, true},
		{"paper", "auto", 2, true},
		{"paper", "official", 2, false},
	} {
		if got := statsMoved(tc.variant, tc.bnTrain, tc.round); got != tc.moved {
			t.Errorf("variant %s, bn_train %s, round %d: running statistics moved = %v, want %v",
				tc.variant, tc.bnTrain, tc.round, got, tc.moved)
		}
	}
}
