package stages

import (
	"context"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/gomlx"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
	"github.com/fedpipe/fedpipe/stages/train"
)

// DM-PFL's and FedDST's state (global mask in Aux, personal masks and weights, work rows)
// survives a checkpoint through the store's encoding: resuming from the decoded state after
// any round ends bit-identical to the uninterrupted run.
func TestSparseMethodsResumeThroughCheckpointEncoding(t *testing.T) {
	backend, err := gomlx.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Synthetic(data.SyntheticParams{Alpha: 0.5, Beta: 0.5, Devices: 6, Features: 60, Classes: 10})
	for _, method := range []string{"dmpfl", "dmpfl_plus", "feddst"} {
		r := &pipeline.Run{MethodName: method, Method: method, Seed: 3, Dataset: pipeline.DatasetSpec{Name: "synthetic"},
			Partition: pipeline.PartitionSpec{Scheme: "natural", Clients: 6, TestFraction: 0.25},
			Model:     pipeline.ModelSpec{Arch: "logreg"},
			Train: pipeline.TrainSpec{Rounds: 4, Participation: 0.5, LocalEpochs: 1, BatchSize: 16, LR: 0.05,
				EvalEvery: 2, CheckpointEvery: 1},
			Params:  map[string]float64{"sparsity": 0.5, "alpha_s": 0.1, "readjust_every": 1, "iterations": 1, "share_threshold": 0.3},
			Options: map[string]string{"base_entropy": "train"}}
		a, err := partition.Make(ds, r.Dataset, r.Partition, r.Seed)
		if err != nil {
			t.Fatal(err)
		}
		var blobs []pipeline.Outputs
		full, err := train.Run(context.Background(), train.Config{Run: r, Data: ds, Assign: a, Backend: backend,
			Checkpoint: func(st *train.State) error {
				b, err := encodeState(st)
				blobs = append(blobs, b)
				return err
			}})
		if err != nil {
			t.Fatal(err)
		}
		if len(blobs) != 3 {
			t.Fatalf("%s: %d checkpoints, want 3", method, len(blobs))
		}
		for i, b := range blobs {
			st, err := decodeState(b, a.Clients(), r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := train.Run(context.Background(), train.Config{Run: r, Data: ds, Assign: a, Backend: backend, Resume: st})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Global, full.Global) || !reflect.DeepEqual(got.Personal, full.Personal) ||
				!reflect.DeepEqual(got.Masks, full.Masks) || !reflect.DeepEqual(got.Aux, full.Aux) ||
				!reflect.DeepEqual(got.Metrics, full.Metrics) || !reflect.DeepEqual(got.Work, full.Work) {
				t.Errorf("%s resumed after round %d differs from the uninterrupted run", method, i+1)
			}
		}
	}
}
