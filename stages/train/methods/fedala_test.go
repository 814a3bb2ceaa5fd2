package methods

import (
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/train"
)

func TestFedALAWeightOneIsFedAvg(t *testing.T) {
	ala, _ := runMLP(t, "fedala", map[string]float64{"eta": 0}, nil, 3)
	avg, _ := runMLP(t, "fedavg", nil, nil, 3)
	if !reflect.DeepEqual(ala.Global, avg.Global) {
		t.Error("FedALA with W fixed at 1 differs from FedAvg")
	}
	st, _ := runMLP(t, "fedala", nil, nil, 4)
	rounds := map[int]int{}
	for _, r := range st.Comm {
		rounds[r.Client]++
	}
	moved := false
	for c, w := range st.Method.(*fedALAState).Weights {
		if (w != nil) != (rounds[c] >= 1) {
			t.Fatalf("client %d: %d participations, W kept: %v", c, rounds[c], w != nil)
		}
		if w == nil {
			continue
		}
		if len(w) != 3 || w[0].Name != "classifier.weight" || w[1].Name != "classifier.bias" {
			t.Fatalf("client %d: weights over %v, want the classifier only (layer_idx 1)", c, w)
		}
		// W is learned only from a client's second participation on: at its first it holds
		// no model of its own.
		if n := int(w[2].Data[0]); n != rounds[c]-1 {
			t.Errorf("client %d: %d participations, %d adaptations", c, rounds[c], n)
		}
		for _, t0 := range w[:2] {
			for _, v := range t0.Data {
				if v < 0 || v > 1 {
					t.Fatalf("client %d: W = %v outside [0, 1]", c, v)
				}
				moved = moved || v != 1
			}
		}
	}
	if !moved {
		t.Error("W never moved from 1")
	}
	if reflect.DeepEqual(st.Global, avg.Global) {
		t.Error("adaptive aggregation changed nothing")
	}
}

func TestFedALACombine(t *testing.T) {
	f := &fedALA{layers: 1}
	mk := func(vals ...float32) tensor.List {
		return tensor.List{
			{Name: "fc1.weight", Shape: []int{1}, Data: []float32{vals[0]}}, {Name: "fc1.bias", Shape: []int{1}, Data: []float32{vals[1]}},
			{Name: "classifier.weight", Shape: []int{2}, Data: []float32{vals[2], vals[3]}}, {Name: "classifier.bias", Shape: []int{1}, Data: []float32{vals[4]}},
		}
	}
	g, l := mk(1, 2, 3, 4, 5), mk(-1, -2, -3, -4, -5)
	w := tensor.List{{Name: "classifier.weight", Shape: []int{2}, Data: []float32{1, 0.25}}, {Name: "classifier.bias", Shape: []int{1}, Data: []float32{0}}}
	got := f.combine(g, l, w)
	// lower layer: global; top: local + (global - local)·W.
	want := mk(1, 2, 3, -4+8*0.25, -5)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("combine = %v, want %v", got, want)
	}
}

// TestFedALAFLBenchSharedWorker serves two clients on one FL-bench worker by hand, with
// eta 0 (W is not learned, so θ̂ follows from W alone). Global model: every entry 1. The
// worker's model, left by its previous client: fc1 5, classifier −1, W 0.25 on the
// classifier (layer_idx 1). Client A: the worker's first tensor (fc1.weight, 5) differs
// from the global one, so no reset; fc1 takes the global 1 and the classifier blends the
// previous client's −1: −1 + (1 − (−1))·0.25 = −0.5. Client B, next on the same worker: A
// left fc1 at the global value, so FL-bench's first-tensor test reloads the global model
// and B's θ̂ is the global model, classifier 1: the model a client gets depends on who the
// worker served before, never on a model of its own.
func TestFedALAFLBenchSharedWorker(t *testing.T) {
	mk := func(fc1, cls float32) tensor.List {
		return tensor.List{
			{Name: "fc1.weight", Shape: []int{2}, Data: []float32{fc1, fc1}}, {Name: "fc1.bias", Shape: []int{1}, Data: []float32{fc1}},
			{Name: "classifier.weight", Shape: []int{2}, Data: []float32{cls, cls}}, {Name: "classifier.bias", Shape: []int{1}, Data: []float32{cls}},
		}
	}
	worker := append(mk(5, -1),
		tensor.Tensor{Name: alaW("classifier.weight"), Shape: []int{2}, Data: []float32{0.25, 0.25}},
		tensor.Tensor{Name: alaW("classifier.bias"), Shape: []int{1}, Data: []float32{0.25}},
		tensor.Tensor{Name: alaStarted, Shape: []int{1}, Data: []float32{1}})
	st := &train.State{Global: mk(1, 1), Method: &fedALAState{Workers: []tensor.List{worker}}}
	a := &alaFLBench{fedALA: &fedALA{layers: 1, eta: 0, randPercent: 80}, rayAssign: rayAssign{workers: 1}}
	for i, want := range []tensor.List{mk(1, -0.5), mk(1, 1)} {
		got, err := a.serve(&train.Local{}, st, 0, "test")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("client %d: θ̂ = %v, want %v", i, got, want)
		}
		if w := st.Method.(*fedALAState).Workers[0]; !reflect.DeepEqual(w[:4], want) || w[w.Find(alaW("classifier.bias"))].Data[0] != 0.25 {
			t.Errorf("client %d: worker left with %v, want θ̂ and W 0.25", i, w)
		}
	}
}

// TestFedALAFLBenchEvaluation runs impl flbench (serial mode, eval_every 2) and checks the
// evaluation models of the test pass after the last round: every client's lower layers are
// the global model's, and, by TestFedALAFLBenchSharedWorker's reset, every client after
// the first tested on the worker is evaluated with the global model itself; with two
// workers the first two clients (one per worker) may differ, the rest may not.
func TestFedALAFLBenchEvaluation(t *testing.T) {
	for _, workers := range []float64{1, 2} {
		st, _ := runMLP(t, "fedala", map[string]float64{"workers": workers}, map[string]string{"impl": "flbench"}, 3)
		if n := len(st.Method.(*fedALAState).Workers); n != int(workers) {
			t.Fatalf("%d workers kept, want %v", n, workers)
		}
		for c, p := range st.Personal {
			for i, g := range st.Global {
				if isClassifier(g.Name) && c < int(workers) {
					continue
				}
				if !reflect.DeepEqual(p[i].Data, g.Data) {
					t.Errorf("%v workers: client %d evaluated with %s off the global model", workers, c, g.Name)
				}
			}
		}
		last := st.Personal[len(st.Personal)-1]
		if w := st.Method.(*fedALAState).Workers[0]; !reflect.DeepEqual(w[:len(last)], last) {
			t.Errorf("%v workers: worker 0 does not hold the last tested client's model", workers)
		}
	}
}
