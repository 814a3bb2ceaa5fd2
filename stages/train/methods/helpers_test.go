package methods

import (
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
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
