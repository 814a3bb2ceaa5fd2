package methods

import (
	"math"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// A client that never trained is scored with θ_init against θ_g and keeps θ_init on its
// top entries, as the official code does.
func TestFedOBPNeverTrainedKeepsInitialOnTopEntries(t *testing.T) {
	m := func(v ...float32) tensor.List { return tensor.List{{Name: "w", Shape: []int{4}, Data: v}} }
	f := &fedOBP{q: 0.5, score: "obp", norm: "global"}
	st := &train.State{Global: m(1, 2, 3, 4)}
	f.Init(st, 2)
	st.Global = m(1, 2, 7, 4) // after some rounds; entry 2 moved most
	start, mask, err := f.personalize(st, 1, &train.Local{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{0, 0, 1, 0}; !reflect.DeepEqual(mask[0].Data, want) {
		t.Errorf("mask %v, want %v", mask[0].Data, want)
	}
	if want := []float32{1, 2, 3, 4}; !reflect.DeepEqual(start[0].Data, want) {
		t.Errorf("start %v, want θ_init's 3 on the top entry and θ_g elsewhere %v", start[0].Data, want)
	}
}

// With ema, the raw scores are averaged and the average is normalized: the stored average
// is raw, not min-max normalized.
func TestFedOBPEMANormalizesAfterAveraging(t *testing.T) {
	m := func(v ...float32) tensor.List { return tensor.List{{Name: "w", Shape: []int{3}, Data: v}} }
	f := &fedOBP{q: 0.5, score: "obp", norm: "global", ema: 0.5}
	st := &train.State{Global: m(0, 0, 0)}
	f.Init(st, 1)
	st.Personal[0] = m(1, 2, 4)                      // raw scores 1, 4, 16
	st.Method.(*fedOBPState).Score[0] = m(100, 0, 0) // an earlier raw average
	if _, _, err := f.personalize(st, 0, &train.Local{}); err != nil {
		t.Fatal(err)
	}
	if want := []float32{50.5, 2, 8}; !reflect.DeepEqual(st.Method.(*fedOBPState).Score[0][0].Data, want) {
		t.Errorf("stored average %v, want the raw average %v", st.Method.(*fedOBPState).Score[0][0].Data, want)
	}
}

// FedOBP's Fisher score (Eq. 6) squares the full-data gradient; the empirical form
// (FedDPA) averages squared per-sample gradients, which is never smaller (Jensen).
func TestFisherFullAndEmpirical(t *testing.T) {
	r, cfg := methodRun(t, "fedobp", nil, nil)
	m, err := model.NewModel(cfg.Backend, train.ModelSpec(r, cfg.Data))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	init, err := train.InitialModel(r, train.ModelSpec(r, cfg.Data))
	if err != nil {
		t.Fatal(err)
	}
	trainX, trainY := cfg.Data.Gather(cfg.Assign.Train[0])
	l := train.NewLocal(train.LocalConfig{Model: m, TrainX: trainX, TrainY: trainY})
	full, err := l.FullGradientSquared(init)
	if err != nil {
		t.Fatal(err)
	}
	emp, err := l.Fisher(init)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Gradient(init, trainX, trainY)
	if err != nil {
		t.Fatal(err)
	}
	strict := false
	for ti, tn := range full {
		gd := g[g.Find(tn.Name)].Data
		for i, v := range tn.Data {
			if want := gd[i] * gd[i]; math.Abs(float64(v-want)) > 1e-5*math.Max(1, float64(want)) {
				t.Fatalf("%s[%d]: %v, want the squared full gradient %v", tn.Name, i, v, want)
			}
			e := emp[ti].Data[i]
			if e < v-1e-6 {
				t.Fatalf("%s[%d]: empirical %v below full %v", tn.Name, i, e, v)
			}
			strict = strict || e > v*1.01+1e-9
		}
	}
	if !strict {
		t.Error("the empirical Fisher equals the squared full gradient everywhere")
	}
	if f := newFedOBP(&FedOBPParams{}); !f.(*fedOBP).fisherFull {
		t.Error("FedOBP's Fisher score is not the full-data form by default")
	}
	if f := newFedDPA(&FedDPAParams{Q: 0.4}); f.(*fedOBP).fisherFull {
		t.Error("FedDPA's Fisher score is not the empirical form")
	}
}
