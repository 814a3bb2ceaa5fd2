package methods

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/stages/train"
)

// The covariance of pFedFDA's code on a 2-D case: class 0 at (1, 0) and (3, 0) (mean (2, 0)),
// class 1 at (0, 1), (0, 3), (0, 2) (mean (0, 2)); the scatter is diag(2, 2), so
// scatter/(5−1) + 1e-4 (every entry) + I = [[1.5001, 0.0001], [0.0001, 1.5001]], positive
// definite, which the projection leaves alone. The projection of [[4, 6], [6, 1]]: its
// correlation [[1, 3], [3, 1]] has eigenvalues 4 on (1, 1)/√2 and −2 on (1, −1)/√2; clipping
// −2 to ~0 leaves 4·vvᵀ = [[2, 2], [2, 2]], rescaled to unit diagonal [[1, 1], [1, 1]], and
// back with standard deviations (2, 1): [[4, 2], [2, 1]].
func TestFDACovarianceAndPSD(t *testing.T) {
	feats := []float32{1, 0, 3, 0, 0, 1, 0, 3, 0, 2}
	y := []int32{0, 0, 1, 1, 1}
	global := [][]float64{{9, 9}, {9, 9}}
	means, counts, scatter := fdaMLE(feats, y, 2, 2, global, false)
	if !reflect.DeepEqual(counts, []int{2, 3}) || !reflect.DeepEqual(means, [][]float64{{2, 0}, {0, 2}}) {
		t.Fatalf("means %v counts %v", means, counts)
	}
	cov := fdaCovariance(scatter, len(y), 2)
	want := []float64{1.5001, 0.0001, 0.0001, 1.5001}
	for i := range want {
		if math.Abs(cov[i]-want[i]) > 1e-12 {
			t.Fatalf("covariance %v, want %v", cov, want)
		}
	}
	// FL-bench's per-class test: class 0 (2 samples) has no mean of its own and is centred
	// on the global (9, 9): diffs (−8, −9) and (−6, −9) add [[100, 126], [126, 162]], class 1
	// adds [[0, 0], [0, 2]].
	_, _, sc := fdaMLE(feats, y, 2, 2, global, true)
	if wantSc := []float64{100, 126, 126, 162 + 2}; !reflect.DeepEqual(sc, wantSc) {
		t.Errorf("per-class scatter %v, want %v", sc, wantSc)
	}
	psd := nearestPSD([]float64{4, 6, 6, 1}, 2)
	for i, w := range []float64{4, 2, 2, 1} {
		if math.Abs(psd[i]-w) > 1e-9 {
			t.Fatalf("nearest PSD %v, want [4 2 2 1]", psd)
		}
	}
}

// The LDA head on a 2-class 2-D case: Σ = diag(2, 1) shrinks to
// (1−ε)Σ + ε·(3/2)·I = diag(2 − ε/2, 1 + ε/2); with μ_0 = (2, 1), μ_1 = (0, −1) and priors
// from labels {0, 0, 0, 1} ((0.75 + ε)/(1 + 2ε), (0.25 + ε)/(1 + 2ε)):
// w_0 = (2/(2 − ε/2), 1/(1 + ε/2)), w_1 = (0, −1/(1 + ε/2)),
// b_0 = −½(4/(2 − ε/2) + 1/(1 + ε/2)) + log π_0, b_1 = −½/(1 + ε/2) + log π_1.
func TestFDAHead(t *testing.T) {
	const e = fdaEps
	priors := fdaPriors([]int32{0, 0, 0, 1}, 2)
	p0, p1 := (0.75+e)/(1+2*e), (0.25+e)/(1+2*e)
	if math.Abs(priors[0]-p0) > 1e-15 || math.Abs(priors[1]-p1) > 1e-15 {
		t.Fatalf("priors %v", priors)
	}
	w, b, err := fdaHead(fdaGauss{means: [][]float64{{2, 1}, {0, -1}}, cov: []float64{2, 0, 0, 1}}, priors, 2)
	if err != nil {
		t.Fatal(err)
	}
	a, c := 2-e/2, 1+e/2
	// weight is [d, classes]: w[k*2+class].
	wantW := []float64{2 / a, 0, 1 / c, -1 / c}
	wantB := []float64{-0.5*(4/a+1/c) + math.Log(p0), -0.5/c + math.Log(p1)}
	for i := range wantW {
		if math.Abs(float64(w[i])-wantW[i]) > 1e-6 {
			t.Fatalf("weight %v, want %v", w, wantW)
		}
	}
	for i := range wantB {
		if math.Abs(float64(b[i])-wantB[i]) > 1e-6 {
			t.Fatalf("bias %v, want %v", b, wantB)
		}
	}
}

// cvLoss's gradient agrees with central finite differences of its loss inside [0, 1]², and
// is zero in a coordinate outside it (the loss is flat there: β is clipped).
func TestFDACVLossGradient(t *testing.T) {
	r := rngForTest()
	const d, classes = 3, 2
	var x []float32
	var y []int32
	for i := 0; i < 40; i++ {
		c := int32(i % classes)
		x = append(x, float32(float64(c)+r.NormFloat64()), float32(r.NormFloat64()), float32(2*r.NormFloat64()))
		y = append(y, c)
	}
	global := fdaGauss{means: [][]float64{{0.3, 0.5, 0.1}, {0.2, 0.9, 0.4}}, cov: []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}}
	folds := []cvFold{
		{est: fdaEstimate(x[60:], y[20:], d, classes, global, 0, false), x: x[:60], y: y[:20]},
		{est: fdaEstimate(x[:60], y[:20], d, classes, global, 0, false), x: x[60:], y: y[20:]},
	}
	priors := fdaPriors(y, classes)
	beta := [2]float64{0.35, 0.6}
	_, g, err := cvLoss(folds, global, priors, d, beta)
	if err != nil {
		t.Fatal(err)
	}
	const h = 1e-6
	for i := range beta {
		up, down := beta, beta
		up[i] += h
		down[i] -= h
		fu, _, _ := cvLoss(folds, global, priors, d, up)
		fd, _, _ := cvLoss(folds, global, priors, d, down)
		if num := (fu - fd) / (2 * h); math.Abs(num-g[i]) > 1e-5*(1+math.Abs(num)) {
			t.Errorf("d/dbeta[%d]: analytic %v, numeric %v", i, g[i], num)
		}
	}
	fIn, _, _ := cvLoss(folds, global, priors, d, [2]float64{1, 0.6})
	fOut, gOut, _ := cvLoss(folds, global, priors, d, [2]float64{1.3, 0.6})
	if fIn != fOut || gOut[0] != 0 {
		t.Errorf("beta_m 1.3: loss %v (at 1: %v), gradient %v, want the same loss and 0", fOut, fIn, gOut[0])
	}
}

// Cross-validation takes β_m to its upper end, 1, when the global means are the client's
// classes swapped (the client's own means classify its held-out half; the global ones
// would misclassify every sample); with nothing to split it returns (0, 0).
func TestPFedFDABetaCV(t *testing.T) {
	const d, classes = 2, 2
	r := rngForTest()
	var x []float32
	var y []int32
	truth := [][]float64{{1, 0}, {-1, 0}}
	for i := 0; i < 40; i++ {
		c := i % classes
		x = append(x, float32(truth[c][0]+0.3*r.NormFloat64()), float32(truth[c][1]+0.3*r.NormFloat64()))
		y = append(y, int32(c))
	}
	wrong := fdaGauss{means: [][]float64{{-1, 0}, {1, 0}}, cov: []float64{1, 0, 0, 1}}
	b := solveBeta(x, y, d, classes, wrong, fdaPriors(y, classes), r, [2]float64{0.5, 0.5}, false)
	if b[0] != 1 {
		t.Errorf("global means swapped: beta %v, want beta_m = 1", b)
	}
	if b := solveBeta(x[:2], y[:1], d, classes, wrong, fdaPriors(y, classes), r, [2]float64{0.5, 0.5}, false); b != [2]float64{0, 0} {
		t.Errorf("one sample: beta %v, want (0, 0)", b)
	}
}

// With impl flbench, training is FedAvg's bit for bit (FL-bench never calls pFedFDA's
// aggregate), and after the evaluated rounds every client's model is the global model with
// only its classifier replaced.
func TestPFedFDAFLBenchTrainsAsFedAvg(t *testing.T) {
	fda, _ := runMLP(t, "pfedfda", nil, map[string]string{"impl": "flbench"}, 2)
	avg, _ := runMLP(t, "fedavg", nil, nil, 2)
	if !reflect.DeepEqual(fda.Global, avg.Global) {
		t.Fatal("flbench global model differs from FedAvg's")
	}
	for c, p := range fda.Personal {
		if !reflect.DeepEqual(tensorsOf(p, func(n string) bool { return !isClassifier(n) }), tensorsOf(avg.Global, func(n string) bool { return !isClassifier(n) })) {
			t.Fatalf("client %d: body is not the global body", c)
		}
		if reflect.DeepEqual(p, avg.Global) {
			t.Fatalf("client %d: head not replaced", c)
		}
	}
}

// trainedPerRound is the set of clients that trained in each round of st.
func trainedPerRound(st *train.State) map[int]map[int]bool {
	trained := map[int]map[int]bool{}
	for _, w := range st.Work {
		if trained[w.Round] == nil {
			trained[w.Round] = map[int]bool{}
		}
		trained[w.Round][w.Client] = true
	}
	return trained
}

// pFedFDA's own code draws each client with probability participation every round
// (servers/server_base.py:26-34) and trains every client in its last round
// (servers/server_fedfda.py:24-25); FL-bench's (impl flbench) draws exactly
// participation × clients every round, the last included.
func TestPFedFDAPaperSampling(t *testing.T) {
	const rounds = 8
	for _, impl := range []string{"paper", "flbench"} {
		st, cfg := runMLP(t, "pfedfda", nil, map[string]string{"impl": impl}, rounds)
		if n, p := cfg.Run.Partition.Clients, cfg.Run.Train.Participation; n != 6 || p != 0.5 {
			t.Fatalf("%d clients at participation %v, want 6 at 0.5", n, p)
		}
		trained := trainedPerRound(st)
		counts := map[int]int{}
		for round := 1; round < rounds; round++ {
			counts[len(trained[round])]++
		}
		last := len(trained[rounds])
		switch impl {
		case "paper":
			// Seven independent draws of 6 clients at 1/2 all of size 3 would be a fixed-size draw.
			if counts[3] == rounds-1 {
				t.Errorf("impl paper: every round before the last trained 3 clients (%v): the draw is not Bernoulli", counts)
			}
			if last != 6 {
				t.Errorf("impl paper: the last round trained %d clients, want all 6", last)
			}
		case "flbench":
			if counts[3] != rounds-1 || last != 3 {
				t.Errorf("impl flbench: clients per round %v and %d in the last, want 3 in each", counts, last)
			}
		}
	}
}

// A Bernoulli draw can give no client at all: that round trains nobody and leaves the
// global model as it was, and the run goes on (the authors' code would average an empty
// set of models).
func TestPFedFDAPaperRoundWithoutClients(t *testing.T) {
	r, cfg := methodRun(t, "pfedfda", nil, map[string]string{"impl": "paper"})
	cfg.Run.Model.Arch, cfg.Run.Model.Hidden = "mlp", []int{8}
	r.Train.Rounds, r.Train.Participation = 6, 0.05 // each round draws nobody with probability 0.95^6 ≈ 0.74
	var globals []train.State
	r.Train.CheckpointEvery = 1
	cfg.Checkpoint = func(st *train.State) error {
		globals = append(globals, train.State{Global: st.Global.Clone()})
		return nil
	}
	st, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	trained := trainedPerRound(st)
	empty := 0
	for round := 2; round < r.Train.Rounds; round++ {
		if len(trained[round]) > 0 {
			continue
		}
		empty++
		if !reflect.DeepEqual(globals[round-1].Global, globals[round-2].Global) {
			t.Errorf("round %d trained nobody, yet the global model changed", round)
		}
	}
	if empty == 0 {
		t.Fatalf("no round between 2 and %d drew an empty set (trained %v): the case is not exercised", r.Train.Rounds-1, trained)
	}
	if len(trained[r.Train.Rounds]) != 6 {
		t.Errorf("the last round trained %d clients, want all 6", len(trained[r.Train.Rounds]))
	}
}

// impl paper: after an evaluated round each client's model is the global body with the LDA
// head of its estimates mixed with the global ones by its fitted β, recomputed here from
// the features of its training data (batch size above every client's size: nothing is
// dropped): class means (more than 2 samples; else the global mean), scatter/(n−1) + ε + I,
// shrunk, then Σ'·w_c = μ_c and b_c = −½μ_c·w_c + log π_c checked by multiplying back.
func TestPFedFDAPaperEvalHead(t *testing.T) {
	_, cfg := methodRun(t, "pfedfda", nil, nil)
	cfg.Run.Model.Arch, cfg.Run.Model.Hidden = "mlp", []int{8}
	cfg.Run.Train.Rounds, cfg.Run.Train.BatchSize = 2, 100000
	st, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := gomlxModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := st.Method.(*pFedFDAState)
	g := gaussOf(s.Global)
	d, k := m.FeatureDim(), cfg.Data.Classes
	for c, p := range st.Personal {
		trainX, trainY := cfg.Data.Gather(cfg.Assign.Train[c])
		feats, err := m.Features(st.Global, trainX, 7)
		if err != nil {
			t.Fatal(err)
		}
		bm, bc := float64(s.Beta[c][0].Data[0]), float64(s.Beta[c][0].Data[1])
		n := len(trainY)
		counts := make([]float64, k)
		own := make([][]float64, k)
		for j := range own {
			own[j] = make([]float64, d)
		}
		for i, lab := range trainY {
			counts[lab]++
			for a := 0; a < d; a++ {
				own[lab][a] += float64(feats[i*d+a])
			}
		}
		for j := range own {
			for a := range own[j] {
				if counts[j] > 0 {
					own[j][a] /= counts[j]
				}
			}
		}
		cov := make([]float64, d*d)
		for i, lab := range trainY {
			for a := 0; a < d; a++ {
				for b := 0; b < d; b++ {
					cov[a*d+b] += (float64(feats[i*d+a]) - own[lab][a]) * (float64(feats[i*d+b]) - own[lab][b])
				}
			}
		}
		tr := 0.0
		for a := 0; a < d; a++ {
			for b := 0; b < d; b++ {
				v := cov[a*d+b]/float64(n-1) + 1e-4
				if a == b {
					v++
				}
				cov[a*d+b] = bc*v + (1-bc)*g.cov[a*d+b]
			}
			tr += cov[a*d+a]
		}
		w, bias := p[p.Find("classifier.weight")].Data, p[p.Find("classifier.bias")].Data
		for j := 0; j < k; j++ {
			mu := make([]float64, d)
			for a := range mu {
				mu[a] = g.means[j][a]
				if counts[j] > 2 {
					mu[a] = bm*own[j][a] + (1-bm)*g.means[j][a]
				}
			}
			dot := 0.0
			for a := 0; a < d; a++ {
				sw := 0.0
				for b := 0; b < d; b++ {
					v := (1 - 1e-4) * cov[a*d+b]
					if a == b {
						v += 1e-4 * tr / float64(d)
					}
					sw += v * float64(w[b*k+j])
				}
				if math.Abs(sw-mu[a]) > 1e-3*(1+math.Abs(mu[a])) {
					t.Fatalf("client %d class %d: (Σ'w)[%d] = %v, μ = %v", c, j, a, sw, mu[a])
				}
				dot += mu[a] * float64(w[a*k+j])
			}
			want := -0.5*dot + math.Log((counts[j]/float64(n)+1e-4)/(1+float64(k)*1e-4))
			if math.Abs(float64(bias[j])-want) > 1e-3*(1+math.Abs(want)) {
				t.Fatalf("client %d class %d: bias %v, want %v", c, j, bias[j], want)
			}
		}
	}
}
