package stages

import (
	"context"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
	"github.com/fedpipe/fedpipe/stages/train"
)

// Methods that carry state beyond the models (masks, weights, statistics, endpoints)
// resume bit-identically from a checkpoint that went through encodeCheckpoint and decodeState.
func TestNewMethodsResumeThroughCheckpoints(t *testing.T) {
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Synthetic(data.SyntheticParams{Alpha: 0.5, Beta: 0.5, Devices: 6, Features: 60, Classes: 10})
	for _, c := range []struct {
		method string
		params map[string]float64
	}{
		{"lotteryfl", map[string]float64{"acc_threshold": 0}},
		{"fedala", nil},
		{"fedpac", nil},
		{"pfedfda", nil},
		{"floco", map[string]float64{"tau": 2}},
		{"flute", nil},
	} {
		r := &pipeline.Run{MethodName: c.method, Method: c.method, Seed: 5, Dataset: pipeline.DatasetSpec{Name: "synthetic"},
			Partition: pipeline.PartitionSpec{Scheme: "natural", Clients: 6, TestFraction: 0.25},
			Model:     pipeline.ModelSpec{Arch: "mlp", Hidden: []int{8}},
			Train: pipeline.TrainSpec{Rounds: 4, Participation: 0.5, LocalEpochs: 1, BatchSize: 16, LR: 0.05,
				Momentum: 0.5, EvalEvery: 2, CheckpointEvery: 1},
			Params: map[string]float64{}, Options: map[string]string{}}
		for _, p := range pipeline.Methods[c.method].Params {
			if p.Choices != nil {
				r.Options[p.Name] = p.Choices[0]
			} else {
				r.Params[p.Name] = p.Default
			}
		}
		for k, v := range c.params {
			r.Params[k] = v
		}
		resumeEqualsUninterrupted(t, r, ds, backend)
	}
}

// resumeEqualsUninterrupted trains run r on ds with a checkpoint after every round, then
// resumes from each checkpoint after a trip through encodeCheckpoint and decodeState and checks
// that the final state encodes to the same bytes as the uninterrupted run's. It returns the
// number of checkpoints.
func resumeEqualsUninterrupted(t *testing.T, r *pipeline.Run, ds *data.Dataset, backend string) int {
	t.Helper()
	a, err := partition.Make(ds, r.Dataset, r.Partition, r.Seed)
	if err != nil {
		t.Fatal(err)
	}
	var blobs []pipeline.Outputs
	full, err := train.Run(context.Background(), train.Config{Run: r, Data: ds, Assign: a, Backend: backend,
		Checkpoint: func(st *train.State) error {
			b, err := encodeCheckpoint(st)
			blobs = append(blobs, b)
			return err
		}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := encodeState(full)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range blobs {
		st, err := decodeState(b, a.Clients(), r)
		if err != nil {
			t.Fatal(err)
		}
		resumed, err := train.Run(context.Background(), train.Config{Run: r, Data: ds, Assign: a, Backend: backend, Resume: st})
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeState(resumed)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s resumed after round %d differs from the uninterrupted run", r.MethodName, i+1)
		}
	}
	return len(blobs)
}
