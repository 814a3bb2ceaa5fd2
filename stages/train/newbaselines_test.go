package train

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/rng"
)

// runMLP is run with an MLP (hidden width 8), so that a body and a head both exist.
func runMLP(t *testing.T, method string, params map[string]float64, options map[string]string, rounds int) (*State, Config) {
	t.Helper()
	_, cfg := methodRun(t, method, params, options)
	cfg.Run.Model.Arch, cfg.Run.Model.Hidden = "mlp", []int{8}
	cfg.Run.Train.Rounds = rounds
	st, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return st, cfg
}

func TestLotteryFLWithoutPruningIsFedAvg(t *testing.T) {
	lot, _ := runMLP(t, "lotteryfl", map[string]float64{"target_sparsity": 0}, nil, 3)
	avg, _ := runMLP(t, "fedavg", nil, nil, 3)
	if !reflect.DeepEqual(lot.Global, avg.Global) {
		t.Error("LotteryFL with target_sparsity 0 differs from FedAvg")
	}
	for c, k := range lot.Aux["keep"] {
		if k != nil {
			if ones, total := count(k); ones != total {
				t.Errorf("client %d pruned %d entries", c, total-ones)
			}
		}
	}
}

func TestLotteryFLPrunesToTarget(t *testing.T) {
	const target = 0.5
	st, _ := runMLP(t, "lotteryfl", map[string]float64{"acc_threshold": 0, "prune_rate": 0.3, "target_sparsity": target}, nil, 4)
	pruned := 0
	for c, keep := range st.Aux["keep"] {
		if keep == nil {
			continue
		}
		p := st.Personal[c]
		for _, k := range keep {
			zeros := 0
			pt := p[p.Find(k.Name)].Data
			for i, v := range k.Data {
				if v == 0 {
					zeros++
					if pt[i] != 0 {
						t.Fatalf("client %d: pruned %s[%d] = %v in its model", c, k.Name, i, pt[i])
					}
				}
			}
			frac := float64(zeros) / float64(len(k.Data))
			if !isWeight(k) && zeros != 0 {
				t.Errorf("client %d: bias %s pruned", c, k.Name)
			}
			if frac > target+1e-9 {
				t.Errorf("client %d: %s sparsity %.3f past the target %.1f", c, k.Name, frac, target)
			}
			pruned += zeros
		}
	}
	if pruned == 0 {
		t.Fatal("nothing was pruned with acc_threshold 0")
	}
	// prune() itself: per tensor, the smallest magnitudes go first, biases never, and never
	// past the target.
	f := &lotteryFL{rate: 0.5, target: 0.9}
	theta := tensor.List{{Name: "a.weight", Shape: []int{2, 2}, Data: []float32{0.3, -0.1, 0.05, -2}},
		{Name: "a.bias", Shape: []int{1}, Data: []float32{0}}}
	keep, ok := f.prune(theta, nil)
	if !ok || !reflect.DeepEqual(keep[0].Data, []float32{1, 0, 0, 1}) || keep[1].Data[0] != 1 {
		t.Errorf("prune kept %v / %v, want [1 0 0 1] / [1]", keep[0].Data, keep[1].Data)
	}
	keep2, _ := f.prune(theta, keep)
	if !reflect.DeepEqual(keep2[0].Data, []float32{0, 0, 0, 1}) {
		t.Errorf("second prune kept %v, want [0 0 0 1]", keep2[0].Data)
	}
	if _, ok := f.prune(theta, keep2); ok {
		t.Error("pruned past the target sparsity 0.9 of a 4-entry tensor")
	}
}

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
	for c, w := range st.Aux["ala_weights"] {
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

// The personal head of pFedFDA with beta = 1 is the closed-form LDA classifier of the
// client's own features: Σ_s·w_c = μ_c and b_c = −½·μ_c·w_c + log π_c, checked by
// multiplying back (no inversion) with statistics computed here from scratch, for every
// class the client holds.
func TestPFedFDAHeadIsLDA(t *testing.T) {
	const shrink, ridge = 0.2, 0.3
	st, cfg := runMLP(t, "pfedfda", map[string]float64{"beta": 1, "shrinkage": shrink, "ridge": ridge}, map[string]string{"beta_mode": "fixed"}, 2)
	m, err := gomlxModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cd := gather(cfg.Data, cfg.Assign)
	checked := 0
	for c, p := range st.Personal {
		if p == nil || reflect.DeepEqual(p, ModelSpec(cfg.Run, cfg.Data).Init(initSeed(cfg.Run))) {
			continue
		}
		feats, err := m.Features(p, cd[c].trainX, 7)
		if err != nil {
			t.Fatal(err)
		}
		d, k, n := m.FeatureDim(), cfg.Data.Classes, len(cd[c].trainY)
		means := make([][]float64, k)
		counts := make([]float64, k)
		for j := range means {
			means[j] = make([]float64, d)
		}
		for i, y := range cd[c].trainY {
			counts[y]++
			for a := 0; a < d; a++ {
				means[y][a] += float64(feats[i*d+a])
			}
		}
		for j := range means {
			for a := range means[j] {
				if counts[j] > 0 {
					means[j][a] /= counts[j]
				}
			}
		}
		cov := make([]float64, d*d)
		for i, y := range cd[c].trainY {
			for a := 0; a < d; a++ {
				for b := 0; b < d; b++ {
					cov[a*d+b] += (float64(feats[i*d+a]) - means[y][a]) * (float64(feats[i*d+b]) - means[y][b]) / float64(n)
				}
			}
		}
		tr := 0.0
		for a := 0; a < d; a++ {
			tr += cov[a*d+a]
		}
		w := p[p.Find("classifier.weight")].Data
		bias := p[p.Find("classifier.bias")].Data
		for j := 0; j < k; j++ {
			if counts[j] == 0 {
				continue // a class the client lacks takes the global mean
			}
			dot := 0.0
			for a := 0; a < d; a++ {
				sw := 0.0
				for b := 0; b < d; b++ {
					s := (1 - shrink) * cov[a*d+b]
					if a == b {
						s += shrink*tr/float64(d) + ridge + 1e-6
					}
					sw += s * float64(w[b*k+j])
				}
				if math.Abs(sw-means[j][a]) > 1e-3*(1+math.Abs(means[j][a])) {
					t.Fatalf("client %d class %d: (Σ w)[%d] = %v, μ = %v", c, j, a, sw, means[j][a])
				}
				dot += means[j][a] * float64(w[a*k+j])
			}
			want := -0.5*dot + math.Log((counts[j]+1)/(float64(n)+float64(k)))
			if math.Abs(float64(bias[j])-want) > 1e-3*(1+math.Abs(want)) {
				t.Fatalf("client %d class %d: bias %v, want %v", c, j, bias[j], want)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no client trained")
	}
	// The body is shared: the global body is the size-weighted average of the uploads, so
	// it moved, and the global head is a valid LDA head (finite).
	for _, v := range st.Global[st.Global.Find("classifier.weight")].Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatal("global head not finite")
		}
	}
}

// gomlxModel compiles the model of a test run.
func gomlxModel(cfg Config) (*model.Model, error) {
	return model.NewModel(cfg.Backend, ModelSpec(cfg.Run, cfg.Data))
}

func TestSimplexQP(t *testing.T) {
	// Two clients with the same means and variances: averaging halves the variance.
	if a := simplexQP([]float64{1, 0, 0, 1}, 2); math.Abs(a[0]-0.5) > 1e-6 || math.Abs(a[1]-0.5) > 1e-6 {
		t.Errorf("equal clients: alpha = %v, want [0.5 0.5]", a)
	}
	// A far-away second client (large bias term) gets (almost) nothing; the weights stay
	// on the simplex and the optimum is the analytic one: α₂ = V/(V + V + b) for
	// A = [[V, 0], [0, V + b]] → α = ((V+b)/(2V+b), V/(2V+b)).
	v, b := 1.0, 100.0
	a := simplexQP([]float64{v, 0, 0, v + b}, 2)
	want := []float64{(v + b) / (2*v + b), v / (2*v + b)}
	for j := range a {
		if math.Abs(a[j]-want[j]) > 1e-6 {
			t.Errorf("alpha = %v, want %v", a, want)
		}
	}
	p := []float64{0.9, 0.8, -2}
	projectSimplex(p)
	if s := p[0] + p[1] + p[2]; math.Abs(s-1) > 1e-12 || p[2] != 0 || math.Abs(p[0]-0.55) > 1e-12 {
		t.Errorf("projection = %v, want [0.55 0.45 0]", p)
	}
}

// FedPAC's feature alignment pulls features toward the centroids: the same training with
// λ > 0 ends with features closer to them than with λ = 0.
func TestFedPACAlignmentPullsFeatures(t *testing.T) {
	_, cfg := methodRun(t, "fedpac", nil, nil)
	cfg.Run.Model.Arch, cfg.Run.Model.Hidden = "mlp", []int{8}
	m, err := gomlxModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cd := gather(cfg.Data, cfg.Assign)
	spec := ModelSpec(cfg.Run, cfg.Data)
	init := spec.Init(initSeed(cfg.Run))
	classes, d := cfg.Data.Classes, m.FeatureDim()
	cent := tensor.List{tensor.New("pac.centroids", classes, d), tensor.New("pac.counts", classes)}
	for k := 0; k < classes; k++ {
		cent[1].Data[k] = 1
		for j := 0; j < d; j++ {
			cent[0].Data[k*d+j] = float32((k+j)%3) * 0.5
		}
	}
	dist := func(lambda float32) float64 {
		l := &Local{model: m, opt: gomlxSGD(cfg), data: cd[0], epochs: 1, batch: 16, seed: 1, round: 1, client: 0}
		p, err := trainAligned(l, init, invert(headMask(init)), cent, lambda, 5)
		if err != nil {
			t.Fatal(err)
		}
		f, err := m.Features(p, cd[0].trainX, 64)
		if err != nil {
			t.Fatal(err)
		}
		targets, _ := centroidTargets(cent, cd[0].trainY, d)
		s := 0.0
		for i := range f {
			s += float64((f[i] - targets[i]) * (f[i] - targets[i]))
		}
		return s / float64(len(cd[0].trainY))
	}
	free, aligned := dist(0), dist(2)
	if !(aligned < 0.7*free) {
		t.Errorf("mean squared distance to centroids: %.4f with lambda 2, %.4f with lambda 0", aligned, free)
	}
}

func gomlxSGD(cfg Config) model.SGD {
	t := cfg.Run.Train
	return model.SGD{LR: float32(t.LR), Momentum: float32(t.Momentum), WeightDecay: float32(t.WeightDecay)}
}

func TestFedPACRun(t *testing.T) {
	st, _ := runMLP(t, "fedpac", nil, nil, 3)
	if st.Aux["pac_centroids"][0] == nil {
		t.Fatal("no global centroids")
	}
	// The body is shared: every client is evaluated with the global body.
	for c := range st.Personal {
		e := (&fedPAC{}).EvalModel(st, c)
		if !reflect.DeepEqual(tensorsOf(e, func(n string) bool { return !isClassifier(n) }),
			tensorsOf(st.Global, func(n string) bool { return !isClassifier(n) })) {
			t.Errorf("client %d evaluated with a body other than the global one", c)
		}
	}
}

// FLOCO with one endpoint is FedAvg (the simplex is a point): same global model up to the
// rounding of applying the optimizer in Go.
func TestFLOCOOneEndpointIsFedAvg(t *testing.T) {
	one, _ := runMLP(t, "floco", map[string]float64{"endpoints": 1, "tau": 1}, nil, 3)
	avg, _ := runMLP(t, "fedavg", nil, nil, 3)
	for i, tt := range avg.Global {
		for j, v := range tt.Data {
			if d := math.Abs(float64(one.Global[i].Data[j] - v)); d > 1e-4*(1+math.Abs(float64(v))) {
				t.Fatalf("%s[%d]: FLOCO %v, FedAvg %v", tt.Name, j, one.Global[i].Data[j], v)
			}
		}
	}
}

func TestFLOCOSubregions(t *testing.T) {
	st, _ := runMLP(t, "floco", map[string]float64{"endpoints": 3, "tau": 2, "rho": 0.1}, nil, 4)
	assigned := 0
	for c, ct := range st.Aux["floco_center"] {
		if ct == nil {
			continue
		}
		assigned++
		s := 0.0
		for _, v := range ct[0].Data {
			if v < 0 {
				t.Errorf("client %d: center %v off the simplex", c, ct[0].Data)
			}
			s += float64(v)
		}
		if math.Abs(s-1) > 1e-5 {
			t.Errorf("client %d: center %v sums to %v", c, ct[0].Data, s)
		}
	}
	if assigned == 0 {
		t.Fatal("no client got a subregion after tau")
	}
	f := &floco{m: 3, rho: 0.1}
	r := rngForTest()
	center := []float64{0.6, 0.3, 0.1}
	for i := 0; i < 200; i++ {
		a := f.sample(r, center)
		dist, s := 0.0, 0.0
		for k := range a {
			if a[k] < 0 {
				t.Fatalf("sample %v off the simplex", a)
			}
			dist += (a[k] - center[k]) * (a[k] - center[k])
			s += a[k]
		}
		if math.Sqrt(dist) > 0.1+1e-12 || math.Abs(s-1) > 1e-12 {
			t.Fatalf("sample %v: distance %v from the center, sum %v", a, math.Sqrt(dist), s)
		}
	}
}

func rngForTest() *rand.Rand { return rng.New(1, 1, 1, "test") }

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

// Every method of the catalogue is implemented, runs with its defaults on a model with a
// body and a head, and is deterministic: two runs give identical states' metrics and
// communication.
func TestEveryCatalogueMethodRunsDeterministically(t *testing.T) {
	for _, name := range manifest.MethodNames() {
		a, _ := runMLP(t, name, nil, nil, 2)
		b, _ := runMLP(t, name, nil, nil, 2)
		if len(a.Metrics) == 0 || len(a.Comm) == 0 {
			t.Errorf("%s: no metrics or communication rows", name)
		}
		for _, m := range a.Metrics {
			if math.IsNaN(m.Loss) || m.Accuracy < 0 || m.Accuracy > 1 {
				t.Errorf("%s: bad metric row %+v", name, m)
			}
		}
		if !reflect.DeepEqual(a.Metrics, b.Metrics) || !reflect.DeepEqual(a.Comm, b.Comm) || !reflect.DeepEqual(a.Global, b.Global) {
			t.Errorf("%s: two identical runs differ", name)
		}
	}
}

func TestNewMethodsCommunication(t *testing.T) {
	_, cfg := methodRun(t, "fedavg", nil, nil)
	cfg.Run.Model.Arch, cfg.Run.Model.Hidden = "mlp", []int{8}
	init := ModelSpec(cfg.Run, cfg.Data).Init(1)
	full := modelBytes(init)
	head := modelBytes(tensorsOf(init, isClassifier))
	body := full - head
	classes, d := int64(cfg.Data.Classes), int64(8)
	check := func(name string, params map[string]float64, want func(round int, c Comm) bool) {
		st, _ := runMLP(t, name, params, nil, 3)
		for _, c := range st.Comm {
			if !want(c.Round, c) {
				t.Errorf("%s: communication row %+v (model %d B, head %d B)", name, c, full, head)
			}
		}
	}
	check("lotteryfl", map[string]float64{"target_sparsity": 0}, func(_ int, c Comm) bool { return c.Down == full && c.Up == full })
	check("lotteryfl", map[string]float64{"acc_threshold": 0}, func(_ int, c Comm) bool { return c.Down < full && c.Up > c.Down })
	check("fedala", nil, func(_ int, c Comm) bool { return c.Down == full && c.Up == full })
	check("flute", nil, func(_ int, c Comm) bool { return c.Down == body && c.Up == body })
	check("floco", map[string]float64{"endpoints": 3, "tau": 100}, func(_ int, c Comm) bool { return c.Down == body+3*head && c.Up == c.Down })
	stats := 4 * (classes*d + d*d + classes)
	check("pfedfda", nil, func(_ int, c Comm) bool { return c.Down == body+stats && c.Up == body+stats })
	check("fedpac", nil, func(round int, c Comm) bool {
		cent := int64(0)
		if round > 1 {
			cent = 4 * (classes*d + classes)
		}
		return c.Down == full+cent && c.Up == full+4*(2*classes*d+classes+1)
	})
}

// Cross-validation picks β = 1 when the global estimates are wrong for the client and a
// β < 1 when the client's own estimates are noisy and the global ones are right.
func TestPFedFDABetaCV(t *testing.T) {
	const d, classes = 2, 2
	f := &pFedFDA{shrink: 0, ridge: 0.01}
	r := rngForTest()
	truth := [][]float64{{1, 0}, {-1, 0}}
	sample := func(n int, noise float64) ([]float32, []int32) {
		var x []float32
		var y []int32
		for i := 0; i < n; i++ {
			c := i % classes
			x = append(x, float32(truth[c][0]+noise*r.NormFloat64()), float32(truth[c][1]+noise*r.NormFloat64()))
			y = append(y, int32(c))
		}
		return x, y
	}
	gx, gy := sample(2000, 0.5)
	right := featureStats(gx, gy, d, classes)
	wrong := featureStats(gx, gy, d, classes)
	wrong.means[0], wrong.means[1] = []float64{-1, 0}, []float64{1, 0} // classes swapped
	x, y := sample(40, 0.5)
	perm := r.Perm(len(y))
	if b, err := f.betaCV(x, y, d, classes, wrong, perm, 0.5); err != nil || b != 1 {
		t.Errorf("global means swapped: beta = %v (%v), want 1", b, err)
	}
	x, y = sample(8, 1.5)
	if b, err := f.betaCV(x, y, d, classes, right, r.Perm(len(y)), 0.5); err != nil || b >= 1 {
		t.Errorf("few noisy local samples, right global estimates: beta = %v (%v), want < 1", b, err)
	}
	if b, _ := f.betaCV(x, y, d, classes, nil, r.Perm(len(y)), 0.3); b != 0.3 {
		t.Errorf("no global estimate: beta = %v, want the fallback 0.3", b)
	}
}

// The manifest check for feature-based methods and the models that expose features must
// name the same architectures; every architecture is listed, and each listed one exposes
// as many features as its classifier has inputs.
func TestFeatureArchsAgree(t *testing.T) {
	if !slices.Equal(manifest.FeatureArchs, model.FeatureArchs) {
		t.Fatalf("manifest.FeatureArchs %v != model.FeatureArchs %v", manifest.FeatureArchs, model.FeatureArchs)
	}
	specs := map[string]model.ModelSpec{
		model.ArchCNN4:             {InputShape: []int{28, 28, 1}},
		model.ArchFedAvgCNN:        {InputShape: []int{32, 32, 3}},
		model.ArchResNet18:         {InputShape: []int{32, 32, 3}},
		model.ArchResNet18ImageNet: {InputShape: []int{64, 64, 3}},
		model.ArchMLP:              {InputShape: []int{20}, Hidden: []int{16, 8}},
		model.ArchLogReg:           {InputShape: []int{5, 4}},
	}
	for arch := range specs {
		if !slices.Contains(model.FeatureArchs, arch) {
			t.Errorf("%s is not in FeatureArchs %v", arch, model.FeatureArchs)
		}
	}
	for _, arch := range model.FeatureArchs {
		spec, ok := specs[arch]
		if !ok {
			t.Errorf("FeatureArchs lists %s, which this test does not know", arch)
			continue
		}
		spec.Arch, spec.NumClasses = arch, 10
		m, err := model.NewModel("", spec)
		if err != nil {
			t.Fatal(err)
		}
		names, shapes, err := spec.ParamShapes()
		if err != nil {
			t.Fatal(err)
		}
		in := -1
		if i := slices.Index(names, "classifier.weight"); i >= 0 {
			in = shapes[i][0]
		}
		if !m.HasFeatures() || m.FeatureDim() != in {
			t.Errorf("%s: HasFeatures %v, FeatureDim %d; the classifier has %d inputs", arch, m.HasFeatures(), m.FeatureDim(), in)
		}
		m.Close()
	}
}

// goSGD never trains or decays BatchNorm running statistics; setStats gives them the
// batch's values.
func TestGoSGDLeavesRunningStatistics(t *testing.T) {
	params := tensor.List{
		{Name: "bn1.weight", Shape: []int{2}, Data: []float32{1, 1}},
		{Name: "bn1.running_var", Shape: []int{2}, Data: []float32{1, 1}},
	}
	grads := tensor.List{
		{Name: "bn1.weight", Shape: []int{2}, Data: []float32{0.5, -0.5}},
		{Name: "bn1.running_var", Shape: []int{2}, Data: []float32{0, 0}},
	}
	opt := newGoSGD(model.SGD{LR: 0.1, WeightDecay: 0.5})
	opt.step("", params, grads, nil, 1)
	if got := params[1].Data; got[0] != 1 || got[1] != 1 {
		t.Errorf("running_var after a step with weight decay: %v, want unchanged [1 1]", got)
	}
	if got := params[0].Data; got[0] == 1 {
		t.Errorf("bn1.weight did not train: %v", got)
	}
	setStats(params, tensor.List{{Name: "bn1.running_var", Shape: []int{2}, Data: []float32{0.9, 1.2}}})
	if got := params[1].Data; got[0] != 0.9 || got[1] != 1.2 {
		t.Errorf("setStats: %v", got)
	}
}
