package methods

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// Alg. 1: the shared entries of the mask a client trained with take the aggregate, so an
// entry personalized this round starts from the aggregated value, not the client's own.
func TestFedSelectNewPersonalEntryStartsFromAggregate(t *testing.T) {
	m := func(v ...float32) tensor.List { return tensor.List{{Name: "w", Shape: []int{3}, Data: v}} }
	for _, official := range []bool{false, true} {
		f := &fedSelect{official: official, rounds: 5}
		st := &train.State{Global: m(0, 0, 0)}
		f.Init(st, 2)
		st.Masks[0] = m(0, 0, 1) // entry 2 already personal for client 0
		uploads := map[int]train.Upload{
			0: {Params: m(1, 2, 3), NextMask: m(1, 0, 1)}, // entry 0 newly personal
			1: {Params: m(5, 6, 7), NextMask: m(0, 0, 0)},
		}
		if err := f.Finish(st, uploads, nil); err != nil {
			t.Fatal(err)
		}
		// Global: entries 0, 1 averaged over both clients; entry 2 only client 1 shares it.
		if want := []float32{3, 4, 7}; !reflect.DeepEqual(st.Global[0].Data, want) {
			t.Fatalf("global %v, want %v", st.Global[0].Data, want)
		}
		held := merge(st.Global, st.Personal[0], st.Masks[0])
		if want := []float32{3, 4, 3}; !reflect.DeepEqual(held[0].Data, want) {
			t.Errorf("official %v: client 0 holds %v, want %v (new personal entry 0 = the aggregate 3, old one its own 3)", official, held[0].Data, want)
		}
		eval := f.EvalModel(st, 0)
		want := []float32{3, 4, 3}
		if official { // the official code evaluates the unmerged local model
			want = []float32{1, 2, 3}
		}
		if !reflect.DeepEqual(eval[0].Data, want) {
			t.Errorf("official %v: evaluated %v, want %v", official, eval[0].Data, want)
		}
	}
}

// The official variant's last round aggregates nothing, and its evaluated accuracy is the
// unmerged local model's.
func TestFedSelectOfficialEvaluatesUnmergedLocalModel(t *testing.T) {
	for _, accuracy := range []string{"", "per_sample"} {
		t.Run("accuracy="+accuracy, func(t *testing.T) { officialUnmerged(t, accuracy) })
	}
}

// officialUnmerged checks the official variant's evaluation with the accuracy parameter
// ("" for its default, the official code's mean over test batches of train.batch_size).
// Per batch, the loss is the mean of the batches' sums, equal to the per-sample mean up to
// float32 summation order.
func officialUnmerged(t *testing.T, accuracy string) {
	opts := map[string]string{"variant": "official"}
	if accuracy != "" {
		opts["accuracy"] = accuracy
	}
	r, cfg := methodRun(t, "fedselect", map[string]float64{"alpha": 0.5, "grow_every": 1}, opts)
	r.Train.Rounds, r.Train.Participation = 3, 1
	r.Train.BatchSize = 3 // several test batches per client, some with a short last one
	var beforeLast tensor.List
	cfg.Run.Train.CheckpointEvery = 1
	cfg.Checkpoint = func(st *train.State) error {
		beforeLast = st.Global.Clone()
		return nil
	}
	st, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st.Global, beforeLast) {
		t.Error("the last round aggregated")
	}
	m, err := model.NewModel(cfg.Backend, train.ModelSpec(r, cfg.Data))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	differs := false
	for _, row := range st.Metrics {
		if row.Round != 3 || row.Split != "test" {
			continue
		}
		local := st.Method.(*fedSelectState).Local[row.Client]
		if local == nil {
			t.Fatalf("client %d has no local model", row.Client)
		}
		testX, testY := cfg.Data.Gather(cfg.Assign.Test[row.Client])
		want, err := train.Evaluate(m, local, testX, testY)
		if err != nil {
			t.Fatal(err)
		}
		perSample := want.Accuracy
		if accuracy == "" { // the official evaluate: the mean of the batches' accuracies
			per, b := len(testX)/len(testY), r.Train.BatchSize
			sum, batches := 0.0, 0
			for i := 0; i < len(testY); i += b {
				j := min(i+b, len(testY))
				got, err := train.Evaluate(m, local, testX[i*per:j*per], testY[i:j])
				if err != nil {
					t.Fatal(err)
				}
				sum += got.Accuracy
				batches++
			}
			want.Accuracy = sum / float64(batches)
		}
		differs = differs || want.Accuracy != perSample
		if want.Accuracy != row.Accuracy || math.Abs(want.Loss-row.Loss) > 1e-6*math.Max(1, want.Loss) {
			t.Errorf("client %d: evaluated %v (loss %v), the unmerged local model scores %v (loss %v)", row.Client, row.Accuracy, row.Loss, want.Accuracy, want.Loss)
		}
	}
	if accuracy == "" && !differs {
		t.Error("no client's per-batch accuracy differs from its per-sample one: the test does not tell them apart")
	}
}

// The official defaults: p = 0.25, growth in 1-based rounds 4, 7, 10, ... (0-based index a
// positive multiple of 3), every tensor whose name ends in "weight", BatchNorm scales
// included.
func TestFedSelectOfficialDefaults(t *testing.T) {
	f := newFedSelect(&FedSelectParams{Variant: "official"})
	if p := f.p; p != 0.25 {
		t.Errorf("official p = %v, want 0.25", p)
	}
	f = newFedSelect(&FedSelectParams{Variant: "paper"})
	if p := f.p; p != 0.05 {
		t.Errorf("paper p = %v, want 0.05", p)
	}
	var grows []int
	for round := 1; round <= 10; round++ {
		if officialGrowth(round, 3) {
			grows = append(grows, round)
		}
	}
	if want := []int{4, 7, 10}; !reflect.DeepEqual(grows, want) {
		t.Errorf("growth rounds %v, want %v", grows, want)
	}
	for name, want := range map[string]bool{"conv1.weight": true, "bn1.weight": true, "layer1.0.bn2.weight": true,
		"conv1.bias": false, "bn1.bias": false, "bn1.running_mean": false} {
		if got := officialGrows(tensor.Tensor{Name: name}); got != want {
			t.Errorf("%s may grow: %v, want %v", name, got, want)
		}
	}
}
