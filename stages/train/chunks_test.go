package train

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
)

// TestCheckpointChunksRoundTrip: a chunked checkpoint decodes to the state it encoded,
// whole chunks do not change as later rounds are added, and unsorted rows fall back to
// whole tables.
func TestCheckpointChunksRoundTrip(t *testing.T) {
	w := tensor.List{{Name: "fc.weight", Shape: []int{2, 2}, Data: []float32{1, -2, 3.5, 0}}}
	run := &manifest.Run{Method: "fedselect", Options: map[string]string{"variant": "official"}}
	st := initState(t, run, w, 2)
	st.Round, st.Personal, st.Masks = 23, []tensor.List{w, nil}, []tensor.List{nil, nil}
	for r := 1; r <= 23; r++ {
		st.Comm = append(st.Comm, Comm{Round: r, Client: r % 2, Down: int64(r), Up: 3})
		st.Work = append(st.Work, Work{Round: r, Client: r % 2, Samples: 10, FLOPs: 2})
		st.Selection = append(st.Selection, Selection{Round: r, Client: 1, Tensor: "fc.weight", Personalized: r % 4, Total: 4})
		if r%5 == 0 {
			st.Metrics = append(st.Metrics, Metric{Round: r, Client: 1, Split: "test", Loss: 0.5, Accuracy: 0.25, Samples: 4})
		}
	}
	blobs, err := EncodeCheckpoint(st)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := blobs["metrics"]; ok {
		t.Fatal("chunked checkpoint stores the whole metrics table")
	}
	for k := range 3 {
		if _, ok := blobs[chunkName(k)]; !ok {
			t.Fatalf("chunk %d missing", k)
		}
	}
	back, err := DecodeState(blobs, 2, runMethod(t, run))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, st) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, st)
	}
	// Ten more rounds leave the completed chunks' bytes as they were.
	later := *st
	later.Round = 33
	for r := 24; r <= 33; r++ {
		later.Comm = append(later.Comm, Comm{Round: r, Client: 0, Down: 1, Up: 1})
	}
	blobs2, err := EncodeCheckpoint(&later)
	if err != nil {
		t.Fatal(err)
	}
	for k := range 2 {
		if !reflect.DeepEqual(blobs[chunkName(k)], blobs2[chunkName(k)]) {
			t.Errorf("completed chunk %d changed when rounds were added", k)
		}
	}
	if reflect.DeepEqual(blobs[chunkName(2)], blobs2[chunkName(2)]) {
		t.Error("the partial chunk did not take the new rows")
	}
	// Rows out of round order: whole tables, still decodable.
	st.Comm[0], st.Comm[len(st.Comm)-1] = st.Comm[len(st.Comm)-1], st.Comm[0]
	blobs, err = EncodeCheckpoint(st)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := blobs["comm"]; !ok {
		t.Error("unsorted rows were chunked")
	}
	if back, err = DecodeState(blobs, 2, runMethod(t, run)); err != nil || !reflect.DeepEqual(back, st) {
		t.Errorf("unsorted round trip: %v", err)
	}
}

// storeGrowth trains r with a checkpoint after every round, storing each as
// manifest.SaveCheckpoint does (every blob, then an index naming them), and returns the
// bytes the store keeps.
func storeGrowth(t *testing.T, r *manifest.Run, ds *data.Dataset, a *partition.Assignment,
	encode func(*State) (map[string][]byte, error)) int64 {
	t.Helper()
	s, err := artifacts.Open(t.TempDir(), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: model.CPUBackend,
		Checkpoint: func(st *State) error {
			blobs, err := encode(st)
			if err != nil {
				return err
			}
			idx := map[string]artifacts.Digest{}
			for name, b := range blobs {
				if idx[name], err = s.Put(b); err != nil {
					return err
				}
			}
			b, err := json.Marshal(idx)
			if err != nil {
				return err
			}
			_, err = s.Put(b)
			return err
		}})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	return stats.StoredBytes
}

// TestCheckpointStoreGrowsLinearly: with a checkpoint and an evaluation after every round,
// doubling the rounds at most doubles the bytes the checkpoints leave in the store (+10 %).
// Storing whole tables at each checkpoint (EncodeState) grows with the rounds' square.
func TestCheckpointStoreGrowsLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 60 rounds")
	}
	ds := data.Synthetic(data.SyntheticParams{Alpha: 0.5, Beta: 0.5, Devices: 8, Features: 60, Classes: 10})
	run := func(rounds int) *manifest.Run {
		params, options := manifest.DefaultParams("fedselect")
		params["alpha"], params["p"], options["variant"] = 0.5, 0.1, "paper"
		return &manifest.Run{MethodName: "fedselect", Method: "fedselect", Seed: 1, Dataset: manifest.DatasetSpec{Name: "synthetic"},
			Partition: manifest.PartitionSpec{Scheme: "natural", Clients: 8, TestFraction: 0.25},
			Model:     manifest.ModelSpec{Arch: "logreg"},
			Train: manifest.TrainSpec{Rounds: rounds, Participation: 0.25, LocalEpochs: 1, BatchSize: 16, LR: 0.05,
				EvalEvery: 1, CheckpointEvery: 1},
			Params: params, Options: options}
	}
	a, err := partition.Make(ds, run(1).Dataset, run(1).Partition, 1)
	if err != nil {
		t.Fatal(err)
	}
	short := storeGrowth(t, run(20), ds, a, EncodeCheckpoint)
	long := storeGrowth(t, run(40), ds, a, EncodeCheckpoint)
	wholeShort := storeGrowth(t, run(20), ds, a, EncodeState)
	wholeLong := storeGrowth(t, run(40), ds, a, EncodeState)
	t.Logf("stored bytes, 20 → 40 rounds: chunked %d → %d (×%.2f), whole tables %d → %d (×%.2f)",
		short, long, float64(long)/float64(short), wholeShort, wholeLong, float64(wholeLong)/float64(wholeShort))
	if float64(long) > 2.2*float64(short) {
		t.Errorf("doubling the rounds took the store from %d to %d bytes (×%.2f, want ≤ 2.2)", short, long, float64(long)/float64(short))
	}
	if float64(wholeLong) <= 2.2*float64(wholeShort) {
		t.Errorf("whole tables grew only ×%.2f: the test no longer tells quadratic from linear growth", float64(wholeLong)/float64(wholeShort))
	}
}
