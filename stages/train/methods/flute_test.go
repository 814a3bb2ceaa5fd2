package methods

import (
	"math"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/train"
)

// With both regularizers off FLUTE is FedRep: same body and same personal heads, up to
// the rounding of the Go-side optimizer.
func TestFLUTEWithoutRegularizersIsFedRep(t *testing.T) {
	fl, cfg := runMLP(t, "flute", map[string]float64{"lambda_nc2": 0, "lambda_nc3": 0, "head_epochs": 1}, nil, 3)
	rep, _ := runMLP(t, "fedrep", map[string]float64{"head_epochs": 1}, nil, 3)
	fr, rr := &flute{}, &split{personal: []string{"classifier."}, schedule: "rep"}
	for c := 0; c < cfg.Assign.Clients(); c++ {
		a, b := fr.EvalModel(fl, c), rr.EvalModel(rep, c)
		for i := range b {
			for j, v := range b[i].Data {
				if d := math.Abs(float64(a[i].Data[j] - v)); d > 1e-4*(1+math.Abs(float64(v))) {
					t.Fatalf("client %d %s[%d]: FLUTE %v, FedRep %v", c, b[i].Name, j, a[i].Data[j], v)
				}
			}
		}
	}
}

// The NC2 and NC3 gradients match central differences of their values, and the NC2 term
// vanishes on a simplex ETF.
func TestFLUTERegularizers(t *testing.T) {
	const d, classes = 4, 3
	r := rngForTest()
	w := make([]float64, d*classes)
	for i := range w {
		w[i] = r.NormFloat64()
	}
	present := []int{0, 2}
	means := [][]float64{{1, 2, 0, 1}, {0, 0, 0, 0}, {-1, 0.5, 2, 0}}
	for _, term := range []func(w, grad []float64) float64{
		func(w, grad []float64) float64 { return nc2(w, d, classes, []int{0, 1, 2}, 1, grad) },
		func(w, grad []float64) float64 { return nc3(w, d, classes, present, means, 1, grad) },
	} {
		g := make([]float64, len(w))
		term(w, g)
		for i := range w {
			const eps = 1e-6
			p, m := append([]float64(nil), w...), append([]float64(nil), w...)
			p[i] += eps
			m[i] -= eps
			fd := (term(p, make([]float64, len(w))) - term(m, make([]float64, len(w)))) / (2 * eps)
			if math.Abs(fd-g[i]) > 1e-5 {
				t.Fatalf("entry %d: gradient %v, central difference %v", i, g[i], fd)
			}
		}
	}
	// Three unit vectors at 120° in a plane: a simplex ETF, NC2 = 0.
	etf := make([]float64, d*classes)
	for c := 0; c < classes; c++ {
		a := 2 * math.Pi * float64(c) / 3
		etf[0*classes+c], etf[1*classes+c] = math.Cos(a), math.Sin(a)
	}
	if v := nc2(etf, d, classes, []int{0, 1, 2}, 1, make([]float64, d*classes)); v > 1e-12 {
		t.Errorf("NC2 of a simplex ETF = %v, want 0", v)
	}
}

// TestRayQueue: costs 5, 1, 1, 3 over two workers. Client 0 takes worker 0 (ends at 5),
// client 1 worker 1 (ends at 1); client 2 waits for client 1 and takes worker 1 (ends at
// 2); client 3 waits for client 2 and takes worker 1 (ends at 5, tied with client 0, which
// was dispatched first). Completion order: 1, 2, 0, 3.
func TestRayQueue(t *testing.T) {
	q := newRayQueue(2)
	var workers []int
	for _, cost := range []int{5, 1, 1, 3} {
		workers = append(workers, q.dispatch(cost))
	}
	if want := []int{0, 1, 1, 1}; !reflect.DeepEqual(workers, want) {
		t.Errorf("workers %v, want %v", workers, want)
	}
	if got, want := q.drain(), []int{1, 2, 0, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("completion order %v, want %v", got, want)
	}
	q = newRayQueue(1)
	for _, cost := range []int{5, 1, 1} {
		if w := q.dispatch(cost); w != 0 {
			t.Fatalf("serial mode used worker %d", w)
		}
	}
	if got, want := q.drain(), []int{0, 1, 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("serial completion order %v, want %v", got, want)
	}
}

// TestFLUTEServerStep checks FL-bench's server step on 2×2 heads W = I (C = 2 classes,
// d = 2), two clients, lr 0.5, so each head moves by −0.25·∇f.
//
// Both classes present: G = I, G/‖G‖ = I/√2, target (I − 11ᵀ/2)/√1 = [[.5, −.5], [−.5, .5]],
// f = √(2(1/√2 − .5)² + 2·.25) = √(2 − √2) = 0.765367. With u = (N − T)/f, ⟨u, N⟩ =
// 2(1/√2 − .5)(1/√2)/f = 0.382683, ∂f/∂G = (u − ⟨u, N⟩N)/‖G‖ = [[0, .461940], [.461940, 0]]
// (the diagonal cancels: 0.270598 − 0.382683·0.707107), ∇_W f = (∂ + ∂ᵀ)W = [[0, .923880],
// [.923880, 0]]: the new head is [[1, −.230970], [−.230970, 1]], the class vectors pushed
// past orthogonal.
//
// Only class 0 present: target [[.5, 0], [0, 0]], N − T = diag(.207107, .707107), f =
// √.542893 = 0.736813, ⟨u, N⟩ = (.146447 + .5)/f = 0.877356, ∂f/∂G = diag(.281085 −
// .620387, .959683 − .620387)/√2 = diag(−.239920, .239920), ∇_W f = diag(−.479841,
// .479841): the new head is diag(1.119960, 0.880040).
func TestFLUTEServerStep(t *testing.T) {
	eye := []float64{1, 0, 0, 1}
	got := fluteServerStep([][]float64{eye, eye}, [][]float32{{1, 1}, {1, 0}}, 2, 2, 0.5)
	want := [][]float64{{1, -0.230970, -0.230970, 1}, {1.119960, 0, 0, 0.880040}}
	for i := range want {
		for j := range want[i] {
			if math.Abs(got[i][j]-want[i][j]) > 1e-5 {
				t.Fatalf("head %d = %v, want %v", i, got[i], want[i])
			}
		}
	}
	if v, _ := fluteNC(eye, 2, 2, []float32{1, 1}); math.Abs(v-math.Sqrt(2-math.Sqrt2)) > 1e-12 {
		t.Errorf("norm %v, want √(2 − √2)", v)
	}
}

// TestFLUTEFLBenchPairsByCompletion: client 0 (10 samples) and client 1 (2 samples) train
// on two workers; client 1 finishes first, so FL-bench stacks its head first while the
// labels and the rows go out in sampling order: with nc2_lr 0 client 0 gets client 1's
// head weight and client 1 client 0's; biases stay their own. In serial mode nothing moves.
func TestFLUTEFLBenchPairsByCompletion(t *testing.T) {
	up := func(w, b float32) train.Upload {
		return train.Upload{Params: tensor.List{
			{Name: "classifier.weight", Shape: []int{1, 2}, Data: []float32{w, w}},
			{Name: "classifier.bias", Shape: []int{2}, Data: []float32{b, b}},
		}, Stats: tensor.List{{Name: fluteLabels, Shape: []int{2}, Data: []float32{1, 1}}}}
	}
	for _, tc := range []struct {
		workers int
		want    [2]float32
	}{{2, [2]float32{2, 1}}, {1, [2]float32{1, 2}}} {
		st := &train.State{Personal: make([]tensor.List, 2)}
		f := fluteFLBench{workers: tc.workers}
		if err := f.finish(st, map[int]train.Upload{0: up(1, 10), 1: up(2, 20)}, map[int]int{0: 10, 1: 2}); err != nil {
			t.Fatal(err)
		}
		for c := range 2 {
			w, b := st.Personal[c][0].Data[0], st.Personal[c][1].Data[0]
			if w != tc.want[c] || b != float32(10*(c+1)) {
				t.Errorf("%d workers: client %d has weight %v bias %v, want %v and %v", tc.workers, c, w, b, tc.want[c], 10*(c+1))
			}
		}
		// The global head is the size-weighted average: (10·1 + 2·2)/12.
		if g := st.Global[0].Data[0]; math.Abs(float64(g)-14.0/12) > 1e-6 {
			t.Errorf("global head weight %v, want 14/12", g)
		}
	}
}

// TestFLUTEFLBenchBodyFrozen: under impl flbench the body never trains (FL-bench's features
// are detached), so after rounds of training the global body is still the initial model's,
// while the trained clients' heads moved; a client that never trained is evaluated with the
// global model.
func TestFLUTEFLBenchBodyFrozen(t *testing.T) {
	st, cfg := runMLP(t, "flute", nil, map[string]string{"impl": "flbench"}, 3)
	init := initModel(cfg.Run, train.ModelSpec(cfg.Run, cfg.Data))
	f := &flute{flbench: true}
	moved := false
	for i, g := range st.Global {
		same := reflect.DeepEqual(g.Data, init[i].Data)
		if !isClassifier(g.Name) && !same {
			t.Errorf("global body tensor %s changed", g.Name)
		}
	}
	for c, p := range st.Personal {
		ev := f.EvalModel(st, c)
		if p == nil {
			if !reflect.DeepEqual(ev, st.Global) {
				t.Errorf("client %d never trained but is not evaluated with the global model", c)
			}
			continue
		}
		for i, tt := range p {
			if !isClassifier(tt.Name) && !reflect.DeepEqual(tt.Data, init[i].Data) {
				t.Errorf("client %d: body tensor %s trained", c, tt.Name)
			}
			moved = moved || (isClassifier(tt.Name) && !reflect.DeepEqual(tt.Data, init[i].Data))
		}
	}
	if !moved {
		t.Error("no head trained")
	}
}
