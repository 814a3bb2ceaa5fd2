package methods

import (
	"math"
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/train"
)

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
	trainX, trainY := cfg.Data.Gather(cfg.Assign.Train[0])
	spec := train.ModelSpec(cfg.Run, cfg.Data)
	init := initModel(cfg.Run, spec)
	classes, d := cfg.Data.Classes, m.FeatureDim()
	cent := tensor.List{tensor.New("pac.centroids", classes, d), tensor.New("pac.counts", classes)}
	for k := 0; k < classes; k++ {
		cent[1].Data[k] = 1
		for j := 0; j < d; j++ {
			cent[0].Data[k*d+j] = float32((k+j)%3) * 0.5
		}
	}
	dist := func(lambda float32) float64 {
		l := train.NewLocal(train.LocalConfig{Model: m, Optimizer: gomlxSGD(cfg), TrainX: trainX, TrainY: trainY,
			Epochs: 1, BatchSize: 16, Seed: 1, Round: 1, Client: 0})
		p, err := trainAligned(l, init, invert(headMask(init)), cent, lambda, 5)
		if err != nil {
			t.Fatal(err)
		}
		f, err := m.Features(p, trainX, 64)
		if err != nil {
			t.Fatal(err)
		}
		targets, _ := centroidTargets(cent, trainY, d)
		s := 0.0
		for i := range f {
			s += float64((f[i] - targets[i]) * (f[i] - targets[i]))
		}
		return s / float64(len(trainY))
	}
	free, aligned := dist(0), dist(2)
	if !(aligned < 0.7*free) {
		t.Errorf("mean squared distance to centroids: %.4f with lambda 2, %.4f with lambda 0", aligned, free)
	}
}

func TestFedPACRun(t *testing.T) {
	st, _ := runMLP(t, "fedpac", nil, nil, 3)
	if st.Method.(*fedPACState).Centroids == nil {
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
