package stages

import (
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/data"
)

// DM-PFL's and FedDST's state (global mask in Aux, personal masks and weights, work rows)
// survives a checkpoint through the store's encoding: resuming from the decoded state after
// any round ends bit-identical to the uninterrupted run.
func TestSparseMethodsResumeThroughCheckpointEncoding(t *testing.T) {
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Synthetic(data.SyntheticParams{Alpha: 0.5, Beta: 0.5, Devices: 6, Features: 60, Classes: 10})
	for _, method := range []string{"dmpfl", "dmpfl_plus", "feddst"} {
		r := &manifest.Run{MethodName: method, Method: method, Seed: 3, Dataset: manifest.DatasetSpec{Name: "synthetic"},
			Partition: manifest.PartitionSpec{Scheme: "natural", Clients: 6, TestFraction: 0.25},
			Model:     manifest.ModelSpec{Arch: "logreg"},
			Train: manifest.TrainSpec{Rounds: 4, Participation: 0.5, LocalEpochs: 1, BatchSize: 16, LR: 0.05,
				EvalEvery: 2, CheckpointEvery: 1},
			Params:  map[string]float64{"sparsity": 0.5, "alpha_s": 0.1, "readjust_every": 1, "iterations": 1, "share_threshold": 0.3},
			Options: map[string]string{"base_entropy": "train"}}
		if n := resumeEqualsUninterrupted(t, r, ds, backend); n != 3 {
			t.Errorf("%s: %d checkpoints, want 3", method, n)
		}
	}
}
