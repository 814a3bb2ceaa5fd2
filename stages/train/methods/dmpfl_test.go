package methods

import (
	"context"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// With S = 0 every mask is full, the phase-2 and refinement steps have nothing to do, and
// DM-PFL is FedAvg: the unmasked SGD step and the same size-weighted float64 average in
// the same client order, so the global models and every metric agree bit for bit (the
// prune/regrow rounds prune entries and regrow the same ones with their values).
// FedDST with S = 0 is FedAvg the same way.
func TestDMPFLSparsityZeroIsFedAvg(t *testing.T) {
	_, avg := methodRun(t, "fedavg", nil, nil)
	b, err := train.Run(context.Background(), avg)
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{"dmpfl", "feddst"} {
		_, cfg := methodRun(t, method, map[string]float64{"sparsity": 0, "readjust_every": 2}, nil)
		a, err := train.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Global, b.Global) || !reflect.DeepEqual(a.Metrics, b.Metrics) {
			t.Errorf("%s with S = 0 differs from FedAvg", method)
		}
	}
}

func TestDMPFLMasksKeepTargetSparsity(t *testing.T) {
	for _, method := range []string{"dmpfl", "feddst"} {
		r, cfg := methodRun(t, method, map[string]float64{"sparsity": 0.5, "readjust_every": 1, "alpha_s": 0.2}, nil)
		r.Train.Rounds = 4
		want := ERKCounts(model.ModelSpec{Arch: "logreg", InputShape: cfg.Data.Shape, NumClasses: cfg.Data.Classes}.Init(1), 0.5)
		cfg.Run.Train.CheckpointEvery = 1
		differs := false
		cfg.Checkpoint = func(st *train.State) error {
			mg := st.Method.(*sparseState).GlobalMask
			for name, k := range maskCounts(mg) {
				if k > want[name] || (method == "feddst" && k != want[name]) {
					t.Errorf("%s round %d: global mask %s has %d active, want %d", method, st.Round, name, k, want[name])
				}
			}
			for c, m := range st.Masks {
				if got := maskCounts(m); !reflect.DeepEqual(got, want) {
					t.Errorf("%s round %d: client %d mask counts %v, want %v", method, st.Round, c, got, want)
				}
				if !reflect.DeepEqual(m, mg) {
					differs = true
				}
			}
			return nil
		}
		st, err := train.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if method == "dmpfl" && !differs {
			t.Error("dmpfl: no client's mask ever left the global mask")
		}
		if method == "feddst" {
			mg := st.Method.(*sparseState).GlobalMask
			for ti, tt := range st.Global {
				for j, v := range tt.Data {
					if mg[ti].Data[j] == 0 && v != 0 {
						t.Fatalf("feddst: inactive global %s[%d] = %v", tt.Name, j, v)
					}
				}
			}
		}
	}
}

func TestDMPFLSchedule(t *testing.T) {
	d := &dmpfl{iterations: 2}
	var phases []int
	var lasts []int
	for r := 1; r <= 10; r++ {
		p, last := d.phase(r, 10)
		phases = append(phases, p)
		if last {
			lasts = append(lasts, r)
		}
	}
	if want := []int{1, 1, 2, 2, 1, 1, 2, 2, 2, 2}; !reflect.DeepEqual(phases, want) {
		t.Errorf("phases %v, want %v", phases, want)
	}
	if want := []int{2, 4, 6, 10}; !reflect.DeepEqual(lasts, want) {
		t.Errorf("block ends %v, want %v", lasts, want)
	}
	if p, _ := (&dmpfl{}).phase(7, 10); p != 1 {
		t.Error("iterations 0 must stay in phase 1")
	}
}

func cloneState(st *train.State) *train.State {
	c := *st
	c.Global = st.Global.Clone()
	clones := func(ls []tensor.List) []tensor.List {
		if ls == nil {
			return nil
		}
		out := make([]tensor.List, len(ls))
		for i, l := range ls {
			out[i] = l.Clone()
		}
		return out
	}
	c.Personal, c.Masks = clones(st.Personal), clones(st.Masks)
	c.BN = clones(st.BN)
	if s, ok := st.Method.(*sparseState); ok {
		c.Method = &sparseState{GlobalMask: s.GlobalMask.Clone()}
	}
	c.Metrics = append([]train.Metric(nil), st.Metrics...)
	c.Comm = append([]train.Comm(nil), st.Comm...)
	c.Work = append([]train.Work(nil), st.Work...)
	c.Selection = append([]train.Selection(nil), st.Selection...)
	return &c
}

// A DM-PFL or FedDST run resumed after any round ends bit-identical to an uninterrupted
// one, across the phase change and the refinement of the personal weights.
func TestSparseMethodsResumeBitIdentical(t *testing.T) {
	for _, method := range []string{"dmpfl", "feddst"} {
		r, cfg := methodRun(t, method, map[string]float64{"readjust_every": 1, "alpha_s": 0.1, "iterations": 1}, nil)
		r.Train.Rounds = 4
		var cps []*train.State
		cfg.Checkpoint = func(st *train.State) error { cps = append(cps, cloneState(st)); return nil }
		full, err := train.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, cp := range cps {
			round := cp.Round
			rc := cfg
			rc.Checkpoint, rc.Resume = nil, cp
			got, err := train.Run(context.Background(), rc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Global, full.Global) || !reflect.DeepEqual(got.Personal, full.Personal) ||
				!reflect.DeepEqual(got.Masks, full.Masks) || !reflect.DeepEqual(got.Metrics, full.Metrics) ||
				!reflect.DeepEqual(got.Comm, full.Comm) || !reflect.DeepEqual(got.Work, full.Work) {
				t.Errorf("%s resumed after round %d differs", method, round)
			}
		}
	}
}
