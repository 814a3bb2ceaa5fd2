package methods

import (
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
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
