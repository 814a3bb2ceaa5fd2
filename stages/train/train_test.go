package train

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
)

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

// A run resumed from any checkpoint ends bit-identical to an uninterrupted run.
func TestResumeIsBitIdentical(t *testing.T) {
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"fedavg", "local"} {
		r, ds, a := tinyRun(method)
		var checkpoints []*State
		full, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: backend,
			Checkpoint: func(st *State) error {
				c := *st
				c.Global = st.Global.Clone()
				c.Personal = append([]tensor.List(nil), st.Personal...)
				c.Metrics = append([]Metric(nil), st.Metrics...)
				checkpoints = append(checkpoints, &c)
				return nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		if len(checkpoints) != 3 {
			t.Fatalf("%s: %d checkpoints, want 3 (after rounds 1-3)", method, len(checkpoints))
		}
		for _, cp := range checkpoints {
			resumed, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: backend, Resume: cp})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(resumed.Global, full.Global) || !reflect.DeepEqual(resumed.Personal, full.Personal) ||
				!reflect.DeepEqual(resumed.Metrics, full.Metrics) {
				t.Errorf("%s resumed after round %d differs from the uninterrupted run", method, cp.Round)
			}
		}
		// Local clients never see each other: the global model never changes.
		if method == "local" && !reflect.DeepEqual(full.Global, ModelSpec(r, ds).Init(initSeed(r))) {
			t.Error("local training changed the shared initial model")
		}
	}
}

func TestFedAvgLearnsSynthetic(t *testing.T) {
	backend, _ := model.ResolveBackend("")
	r, ds, a := tinyRun("fedavg")
	r.Train.Rounds = 10
	r.Train.EvalTrainSplit = true
	st, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: backend})
	if err != nil {
		t.Fatal(err)
	}
	var first, last []Metric
	for _, m := range st.Metrics {
		if m.Split == "train" && m.Round == 2 {
			first = append(first, m)
		}
		if m.Split == "train" && m.Round == 10 {
			last = append(last, m)
		}
	}
	if MeanAccuracy(last, "train") <= MeanAccuracy(first, "train") {
		t.Errorf("train accuracy did not improve: %.3f after round 2, %.3f after round 10",
			MeanAccuracy(first, "train"), MeanAccuracy(last, "train"))
	}
}

// TestTrainSplitOnlyOnRequest: without train.eval_train_split no "train" rows are written,
// and every other row is what a run that also evaluates the training split records.
func TestTrainSplitOnlyOnRequest(t *testing.T) {
	backend, _ := model.ResolveBackend("")
	r, ds, a := tinyRun("fedavg")
	r.Train.Rounds = 3
	r.Train.FinetuneEpochs = 1
	without, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: backend})
	if err != nil {
		t.Fatal(err)
	}
	r.Train.EvalTrainSplit = true
	with, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: backend})
	if err != nil {
		t.Fatal(err)
	}
	var rest []Metric
	trainRows := 0
	for _, m := range with.Metrics {
		if m.Split == "train" {
			trainRows++
			continue
		}
		rest = append(rest, m)
	}
	if trainRows == 0 {
		t.Fatal("eval_train_split recorded no train rows")
	}
	for _, m := range without.Metrics {
		if m.Split == "train" {
			t.Fatalf("train row recorded without eval_train_split: %+v", m)
		}
	}
	if !reflect.DeepEqual(rest, without.Metrics) {
		t.Errorf("test rows differ when the training split is also evaluated:\n%v\n%v", rest, without.Metrics)
	}
	if !reflect.DeepEqual(with.Global, without.Global) {
		t.Error("evaluating the training split changed the trained model")
	}
}

// TestClientSetGathers: each client's splits are the dataset's samples at its partition
// indices, in order, gathered anew on every call (callers may keep or modify them).
func TestClientSetGathers(t *testing.T) {
	ds, a := tinyImages(30, 4, 3)
	cs := clientSet{d: ds, a: a}
	if cs.n() != a.Clients() {
		t.Fatalf("n = %d, want %d", cs.n(), a.Clients())
	}
	for c := range cs.n() {
		all := cs.all(c)
		if cs.trainSize(c) != len(a.Train[c]) || len(all.trainY) != len(a.Train[c]) || len(all.testY) != len(a.Test[c]) {
			t.Fatalf("client %d: sizes %d/%d/%d, partition %d/%d", c, cs.trainSize(c), len(all.trainY), len(all.testY), len(a.Train[c]), len(a.Test[c]))
		}
		s := ds.SampleSize()
		for k, i := range a.Train[c] {
			if all.trainY[k] != ds.Y[i] || !slices.Equal(all.trainX[k*s:(k+1)*s], ds.Sample(i)) {
				t.Fatalf("client %d, training sample %d is not dataset sample %d", c, k, i)
			}
		}
		for k, i := range a.Test[c] {
			if all.testY[k] != ds.Y[i] || !slices.Equal(all.testX[k*s:(k+1)*s], ds.Sample(i)) {
				t.Fatalf("client %d, test sample %d is not dataset sample %d", c, k, i)
			}
		}
		tr := cs.train(c)
		if tr.testX != nil || !slices.Equal(tr.trainX, all.trainX) {
			t.Fatalf("client %d: train() differs from all()'s training split or carries a test split", c)
		}
		if len(tr.trainX) > 0 {
			tr.trainX[0]++
			if again := cs.train(c); again.trainX[0] == tr.trainX[0] {
				t.Fatalf("client %d: train() returned shared memory", c)
			}
		}
	}
}
