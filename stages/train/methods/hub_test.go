package methods

import (
	"context"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
	"github.com/fedpipe/fedpipe/stages/train"
)

// hubImages is a small 3-class image dataset (class y brightens column band y) split over
// clients of uneven sizes, for the convolutional networks' runs.
func hubImages(side, clients int) (*data.Dataset, *partition.Assignment) {
	r := rand.New(rand.NewPCG(21, 22))
	ds := &data.Dataset{Name: "hub-images", Shape: []int{side, side, 1}, Classes: 3, PixelMean: []float64{0.5}, PixelStd: []float64{0.25}}
	a := &partition.Assignment{}
	i := 0
	for c := range clients {
		n := 8 + 5*c // uneven: ragged last batches, clients that finish early
		var idx []int
		for range n {
			y := int32(i % 3)
			for range side {
				for col := range side {
					p := 0.3 + 0.1*r.NormFloat64()
					if col*3/side == int(y) {
						p += 0.4
					}
					ds.X = append(ds.X, float32((p-0.5)/0.25))
				}
			}
			ds.Y = append(ds.Y, y)
			idx = append(idx, i)
			i++
		}
		a.Test = append(a.Test, idx[:n/4])
		a.Train = append(a.Train, idx[n/4:])
	}
	return ds, a
}

// TestHubRunsTogetherMatchAlone trains 4 seeds of FedAvg, FedPer, Local and FedOBP (a
// logistic regression), 2 seeds of FedAvg on cnn4 and a pair on DM-PFL's fedavgcnn (padded
// convolutions), all at the same time through one Hub, and checks each run's final state
// (models, masks, metrics, costs, the method's own state) equals the run's alone, one
// client after another, bit for bit; that runs did share lockstep steps; and that runs with
// different steps got engines of their own.
func TestHubRunsTogetherMatchAlone(t *testing.T) {
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	var cfgs []train.Config
	for _, method := range []string{"fedavg", "fedper", "local", "fedobp"} {
		for seed := range 4 {
			r, cfg := methodRun(t, method, nil, nil)
			r.Seed = int64(seed)
			r.Train.Rounds, r.Train.FinetuneEpochs = 3, 1
			cfgs = append(cfgs, cfg)
		}
	}
	for _, arch := range []string{model.ArchCNN4, "fedavgcnn"} {
		ds, a := hubImages(16, 4)
		for seed := range 2 {
			r := &manifest.Run{MethodName: "fedavg", Method: "fedavg", Seed: int64(seed), Dataset: manifest.DatasetSpec{Name: "hub-images"},
				Partition: manifest.PartitionSpec{Clients: 4},
				Model:     manifest.ModelSpec{Arch: arch},
				Train: manifest.TrainSpec{Rounds: 2, Participation: 1, LocalEpochs: 1, BatchSize: 4, LR: 0.05,
					Momentum: 0.5, EvalEvery: 1, FinetuneEpochs: 1}}
			r.Params, r.Options = manifest.DefaultParams("fedavg")
			cfgs = append(cfgs, train.Config{Run: r, Data: ds, Assign: a, Backend: backend})
		}
	}
	alone := make([]*train.State, len(cfgs))
	for i, cfg := range cfgs {
		cfg.ClientWorkers = 1
		st, err := train.Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s alone: %v", cfg.Run.Label(), err)
		}
		alone[i] = st
	}
	hub := train.NewHub(context.Background(), backend)
	hub.Window = 20 * time.Millisecond
	defer hub.Close()
	before := train.SharedSteps()
	together := make([]*train.State, len(cfgs))
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg.Hub = hub
			together[i], errs[i] = train.Run(context.Background(), cfg)
		}()
	}
	wg.Wait()
	for i, cfg := range cfgs {
		if errs[i] != nil {
			t.Fatalf("%s %s together: %v", cfg.Run.Model.Arch, cfg.Run.Label(), errs[i])
		}
		a, b := alone[i], together[i]
		if !reflect.DeepEqual(a.Global, b.Global) || !reflect.DeepEqual(a.Personal, b.Personal) ||
			!reflect.DeepEqual(a.Masks, b.Masks) || !reflect.DeepEqual(a.Metrics, b.Metrics) ||
			!reflect.DeepEqual(a.Comm, b.Comm) || !reflect.DeepEqual(a.Work, b.Work) ||
			!reflect.DeepEqual(a.Method, b.Method) || !reflect.DeepEqual(a.Fingerprints, b.Fingerprints) {
			t.Errorf("%s %s: trained together it differs from alone", cfg.Run.Model.Arch, cfg.Run.Label())
		}
	}
	if shared := train.SharedSteps() - before; shared == 0 {
		t.Error("no lockstep step held the clients of more than one run")
	}
	// logreg (one step: the four methods share the optimizer), cnn4, fedavgcnn.
	if n := hub.Engines(); n != 3 {
		t.Errorf("%d lockstep engines, want 3 (one per network)", n)
	}
}
