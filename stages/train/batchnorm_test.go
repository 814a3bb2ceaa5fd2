package train

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
)

// TestFedAvgResNet18 runs FedAvg with the real ResNet-18 (CIFAR stem) through the train
// stage on a tiny generated image set, with each of the BatchNorm options: bn_stats local
// (the default) keeps every client's running statistics out of aggregation — each client
// is evaluated with the statistics of its own last training — while every trained tensor
// is the global one; averaged leaves nothing per client; bn_params personal keeps γ and β
// per client too.
func TestFedAvgResNet18(t *testing.T) {
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	ds, a := tinyImages(36, 8, 3)
	start := time.Now()
	for _, tc := range []struct{ stats, params string }{{"local", "shared"}, {"averaged", "shared"}, {"averaged", "personal"}} {
		r := imageRun("fedavg", model.ArchResNet18)
		r.Model.BNStats, r.Model.BNParams = tc.stats, tc.params
		if tc.stats == "averaged" {
			r.Train.Rounds = 1
		}
		st, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: backend})
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Metrics) == 0 || st.Metrics[len(st.Metrics)-1].Round != r.Train.Rounds {
			t.Fatalf("%+v: no metrics for the last round", tc)
		}
		if PersonalModels(r) != (tc.stats == "local" || tc.params == "personal") {
			t.Errorf("%+v: PersonalModels = %v", tc, PersonalModels(r))
		}
		models := EvalModels(runMethod(t, r), st, a.Clients())
		for _, p := range st.Global {
			i := st.Global.Find(p.Name)
			stat := model.IsRunningStat(p.Name)
			base := strings.TrimSuffix(strings.TrimSuffix(p.Name, ".weight"), ".bias")
			affine := !stat && st.Global.Find(base+".running_mean") >= 0
			perClient := (stat && tc.stats == "local") || (affine && tc.params == "personal")
			for c, m := range models {
				same := slices.Equal(m[i].Data, p.Data)
				if perClient == same {
					t.Fatalf("%+v: client %d's %s equals the global one: %v (want %v)", tc, c, p.Name, same, !perClient)
				}
				if perClient {
					own := st.BN[c]
					if j := own.Find(p.Name); j < 0 || !slices.Equal(own[j].Data, m[i].Data) {
						t.Fatalf("%+v: client %d is not evaluated with its own %s", tc, c, p.Name)
					}
				}
			}
		}
	}
	t.Logf("three ResNet-18 runs in %v", time.Since(start))
}

// TestBNLocalStatsLeaveAggregation checks bnKeep on hand-made models: a client starts from
// the global model with its own statistics, and its statistics come back to it, not to
// another client, whatever the server averages.
func TestBNLocalStatsLeaveAggregation(t *testing.T) {
	mk := func(w, mean float32) tensor.List {
		return tensor.List{{Name: "conv1.weight", Shape: []int{1}, Data: []float32{w}},
			{Name: "bn1.weight", Shape: []int{1}, Data: []float32{1}},
			{Name: "bn1.running_mean", Shape: []int{1}, Data: []float32{mean}}}
	}
	st := &State{Global: mk(0, 0)}
	avg, err := NewMethod(&manifest.Run{Method: "fedavg"})
	if err != nil {
		t.Fatal(err)
	}
	k := bnKeep{Method: avg, stats: true}
	k.Init(st, 2)
	st.BN[0] = tensor.List{{Name: "bn1.running_mean", Shape: []int{1}, Data: []float32{7}}}
	got := k.EvalModel(st, 0)
	if want := mk(0, 7); !reflect.DeepEqual(got, want) {
		t.Errorf("client 0 evaluated with %v, want %v", got, want)
	}
	if got := k.EvalModel(st, 1); !reflect.DeepEqual(got, st.Global) {
		t.Errorf("client 1 (never trained) evaluated with %v, want the global model", got)
	}
	if !reflect.DeepEqual(st.Global, mk(0, 0)) {
		t.Error("EvalModel changed the global model")
	}
	if own := k.own(mk(3, 9)); len(own) != 1 || own[0].Name != "bn1.running_mean" {
		t.Errorf("kept %v, want only the running mean", own)
	}
	k.affine = true
	if own := k.own(mk(3, 9)); len(own) != 2 || own[0].Name != "bn1.weight" {
		t.Errorf("kept %v, want γ and the running mean", own)
	}
}

// TestBNAveragedStatsWeightedBySize: with bn_stats averaged (FL-bench's buffers: global,
// src/utils/models.py:47-57, where running statistics become parameters and are averaged
// like them, weighted by training-set size, src/server/fedavg.py:642-664) NewRunMethod adds
// no wrapper, and FedAvg averages the running statistics by size: clients of 1 and 3
// samples with running means 2 and 6 give (1·2 + 3·6)/4 = 5, and the weights 1 and 5 give 4;
// client 0 is evaluated with the average. With bn_stats local the server's average is the
// same, but client 0 is evaluated with its own running mean 2.
func TestBNAveragedStatsWeightedBySize(t *testing.T) {
	mk := func(w, mean float32) tensor.List {
		return tensor.List{{Name: "conv1.weight", Shape: []int{1}, Data: []float32{w}},
			{Name: "bn1.running_mean", Shape: []int{1}, Data: []float32{mean}}}
	}
	for _, tc := range []struct {
		stats    string
		wantEval float32
	}{{"averaged", 5}, {"local", 2}} {
		r := &manifest.Run{Method: "fedavg", Model: manifest.ModelSpec{Arch: model.ArchResNet18, BNStats: tc.stats, BNParams: "shared"}}
		m, err := NewRunMethod(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, wrapped := m.(bnKeep); wrapped != (tc.stats == "local") {
			t.Errorf("bn_stats %s: wrapped = %v", tc.stats, wrapped)
		}
		st := &State{Global: mk(0, 0)}
		m.Init(st, 2)
		if tc.stats == "local" { // the clients' own statistics, as their Train would keep them
			st.BN[0], st.BN[1] = mk(1, 2)[1:], mk(5, 6)[1:]
		}
		uploads := map[int]Upload{0: {Params: mk(1, 2)}, 1: {Params: mk(5, 6)}}
		if err := m.Finish(st, uploads, map[int]int{0: 1, 1: 3}); err != nil {
			t.Fatal(err)
		}
		if got := st.Global[0].Data[0]; got != 4 {
			t.Errorf("bn_stats %s: conv1.weight %v, want (1·1 + 3·5)/4 = 4", tc.stats, got)
		}
		if got := st.Global[1].Data[0]; got != 5 {
			t.Errorf("bn_stats %s: global running mean %v, want 5", tc.stats, got)
		}
		if got := m.EvalModel(st, 0)[1].Data[0]; got != tc.wantEval {
			t.Errorf("bn_stats %s: client 0 evaluated with running mean %v, want %v", tc.stats, got, tc.wantEval)
		}
	}
}
