package train

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
)

// sketchTol is `fedpipe backend --check`'s tolerance, which the cross-backend check uses.
const sketchTol = 1e-4

// TestSketchByHand: a tensor's sketch is its L2 norm and its projections onto the ±1 signs
// that splitmix64 draws for each element, written out here for a two-element tensor.
func TestSketchByHand(t *testing.T) {
	w := tensor.Tensor{Name: "w", Shape: []int{2}, Data: []float32{3, -4}}
	st := &State{Round: 1, Global: tensor.List{w}, Personal: []tensor.List{nil, {w}}}
	sk := SketchState(st)
	if len(sk.Tensors) != 2 || sk.Round != 1 || sk.Projections != SketchProjections {
		t.Fatalf("sketch of one global and one personal tensor: %+v", sk)
	}
	g := sk.Tensors[0]
	if g.Part != "global" || g.Name != "w" || g.Size != 2 || g.Norm != 5 {
		t.Errorf("global tensor sketch %+v, want global w, 2 values, norm 5", g)
	}
	if p := sk.Tensors[1]; p.Part != "personal" || p.Index != 1 || !reflect.DeepEqual(p.Proj, g.Proj) {
		t.Errorf("personal[1] sketch %+v, want the global one's projections", p)
	}
	// The same signs, drawn by hand.
	for k := 0; k < SketchProjections; k++ {
		want := 0.0
		for j, v := range w.Data {
			s := splitmix64(sketchSeed ^ fnv64a("w") ^ uint64(len(w.Data))*0x9e3779b97f4a7c15 + uint64(j))
			if s>>k&1 == 1 {
				want += float64(v)
			} else {
				want -= float64(v)
			}
		}
		if g.Proj[k] != want {
			t.Errorf("projection %d = %v, want %v", k, g.Proj[k], want)
		}
		if math.Abs(want) != 1 && math.Abs(want) != 7 {
			t.Errorf("projection %d = %v is not ±3±4", k, want)
		}
	}
	b, err := EncodeSketch(sk)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSketch(b)
	if err != nil || !reflect.DeepEqual(back, sk) {
		t.Fatalf("sketch round trip: %v, %+v", err, back)
	}
}

func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// TestSketchAcrossBackends: one round trained on the reference CPU backend (fpcpu, whose
// rounding differs from fpfast's) sketches within the cross-backend tolerance of the same
// round on fpfast, though their fingerprints differ; the same sketch with one tensor scaled
// by 1.01 (a mutant result) or of another round does not compare. The sketch is kept by
// the run (State.Sketch after round 1) and survives a checkpoint's encoding.
func TestSketchAcrossBackends(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	for _, method := range []string{"fedavg", "local"} {
		r, ds, a := tinyRun(method)
		sketchOn := func(backend string) *State {
			t.Helper()
			b, err := model.ResolveBackend(backend)
			if err != nil {
				t.Fatal(err)
			}
			st, err := Run(context.Background(), Config{Run: r, Data: ds, Assign: a, Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			if st.Sketch == nil || st.Sketch.Round != SketchRound {
				t.Fatalf("%s on %s: no sketch of round %d kept (%+v)", method, backend, SketchRound, st.Sketch)
			}
			return st
		}
		fast, ref := sketchOn(model.CPUBackend), sketchOn(model.OracleBackend)
		if fast.Fingerprints[0] == ref.Fingerprints[0] {
			t.Logf("%s: fpfast and fpcpu agree bit for bit in round 1", method)
		}
		d := CompareSketches(fast.Sketch, ref.Sketch)
		t.Logf("%s: fpfast against fpcpu, round 1: %d tensors, worst %.3g (%s)", method, d.Tensors, d.Worst, d.WorstTensor)
		if !d.OK(sketchTol) || d.Tensors == 0 {
			t.Errorf("%s: fpfast's round-1 sketch against fpcpu's: %+v, want within %g", method, d, sketchTol)
		}
		// A mutant: fpcpu's state with one tensor scaled by 1.01.
		mut := &State{Round: 1, Global: ref.Global.Clone(), Personal: make([]tensor.List, len(ref.Personal))}
		for c, p := range ref.Personal {
			mut.Personal[c] = p.Clone()
		}
		if method == "local" {
			mut.Personal[0][0] = scaled(mut.Personal[0][0], 1.01)
		} else {
			mut.Global[len(mut.Global)-1] = scaled(mut.Global[len(mut.Global)-1], 1.01)
		}
		if d := CompareSketches(fast.Sketch, SketchState(mut)); d.OK(sketchTol) {
			t.Errorf("%s: a state with one tensor scaled by 1.01 passes: %+v", method, d)
		}
		other := *ref.Sketch
		other.Round = 2
		if d := CompareSketches(fast.Sketch, &other); d.OK(sketchTol) || d.Mismatch == "" {
			t.Errorf("%s: a sketch of round 2 compares with round 1's: %+v", method, d)
		}
		blobs, err := EncodeCheckpoint(fast)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeState(blobs, a.Clients(), runMethod(t, r))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Sketch, fast.Sketch) {
			t.Errorf("%s: the checkpoint lost the sketch", method)
		}
	}
}

func scaled(t tensor.Tensor, f float32) tensor.Tensor {
	t = tensor.List{t}.Clone()[0]
	for i := range t.Data {
		t.Data[i] *= f
	}
	return t
}

// BenchmarkSketchState sketches a 100-client personal state of FedOBP's CNN on 28×28×1 (the
// global model and 100 personal models, as Table 6's personal methods hold after round 1)
// and reports the bytes of its JSON: what keeping a sketch costs a run, once.
// go test ./stages/train -run '^$' -bench SketchState -benchtime 3x
func BenchmarkSketchState(b *testing.B) {
	spec := model.ModelSpec{Arch: model.ArchCNN4, InputShape: []int{28, 28, 1}, NumClasses: 10}
	st := &State{Round: 1, Global: spec.Init(1)}
	for c := range 100 {
		st.Personal = append(st.Personal, spec.Init(uint64(c+2)))
	}
	values := 0
	for _, t := range st.Global {
		values += len(t.Data)
	}
	b.SetBytes(int64(101 * values * 4))
	var size int
	for b.Loop() {
		blob, err := EncodeSketch(SketchState(st))
		if err != nil {
			b.Fatal(err)
		}
		size = len(blob)
	}
	b.ReportMetric(float64(size), "json_bytes")
	b.ReportMetric(float64(values), "values/model")
}
