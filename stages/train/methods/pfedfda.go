package methods

import (
	"math"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/rng"
	"github.com/fedpipe/fedpipe/stages/train"
)

// PFedFDAParams are pfedfda's parameters.
type PFedFDAParams struct {
	BetaMode  string  `param:"beta_mode" choices:"cv|fixed" doc:"cv: each client picks beta from {0, 0.25, 0.5, 0.75, 1} by 2-fold cross-validation on its features after training (the paper fits beta per client); fixed: beta for every client"`
	Beta      float64 `param:"beta" default:"0.5" check:"unit" doc:"weight of the local estimates against the global ones: the value before a client's first cross-validated choice, or always with beta_mode fixed"`
	Shrinkage float64 `param:"shrinkage" default:"0.1" check:"unit" doc:"s in (1 - s) Sigma + s tr(Sigma)/d I + ridge I, the covariance regularization (our form and default)"`
	Ridge     float64 `param:"ridge" default:"0.1" check:"ge0" doc:"absolute ridge added to the covariance's diagonal (our default): keeps the head's scale tied to the features' and the body's training stable"`
}

func init() {
	train.Register(manifest.MethodDef{Name: "pfedfda", Personal: true, Features: true,
		Doc: "pFedFDA (McLaughlin et al., CVPR 2024): shared feature extractor; each client's head is the LDA classifier of class-conditional Gaussian estimates of its features (tied covariance), interpolated with the global estimates by a per-client beta; the body trains with that head fixed."},
		newPFedFDA)
}

// pFedFDA is pFedFDA (McLaughlin et al., CVPR 2024, "Personalized Federated Learning via
// Feature Distribution Adaptation"). The feature extractor (the body: every tensor but
// classifier.*) is shared; the head is generative: features of class c are modelled as
// N(μ_c, Σ) with one covariance shared by the classes, and the classifier is the linear
// discriminant (LDA) of those Gaussians, w_c = Σ⁻¹μ_c, b_c = −½μ_cᵀΣ⁻¹μ_c + log π_c.
//
// In a round, client k receives the global body and the global estimates (μ_g, Σ_g), and:
//
//  1. computes the features of its training data with the global body, estimates its
//     class means μ̂_c and tied covariance Σ̂, and interpolates, with its β,
//     μ_c = β·μ̂_c + (1−β)·μ_g,c (μ_g,c alone for a class it lacks), Σ = β·Σ̂ + (1−β)·Σ_g
//     (before any aggregation there is no global estimate and β acts as 1);
//  2. sets its head to the LDA classifier of (μ, Σ) with its local class priors π, and
//     trains the body alone with that head fixed for the run's local epochs;
//  3. re-estimates (μ̂, Σ̂) with the trained body, uploads the body and the estimates, and
//     keeps as its personal model the trained body with the LDA head of the re-estimates
//     interpolated as in 1.
//
// The server averages the bodies by training-set size, the class means by class count and
// the covariances by training-set size; the global model's head is the LDA classifier of
// the global estimates with uniform priors. Clients are evaluated with their personal
// models.
//
// β is chosen per client, as in the paper, by cross-validation (beta_mode cv, the default):
// after training, among β ∈ {0, 0.25, 0.5, 0.75, 1}, the one whose head fitted on one half of
// the client's features has the smallest cross-entropy on the other half (2 folds, stream
// "pfedfda-cv"; the grid and the fold count are ours); the client keeps it for its personal
// head and for the training head of its next round (beta is the value before the first
// choice, and the value for all clients with beta_mode fixed). Σ is regularized as
// (1 − s)·Σ + s·(tr Σ/d)·I + (ridge + 1e-6)·I with s = shrinkage (the paper regularizes the
// covariance too; the form is ours). The absolute ridge matters: LDA logits do not change
// when the features are scaled, so without it the body's gradient grows as the features
// shrink, and the small ReLU features of a fresh CNN (variance ~1e-3) blow up within a
// round; with it, a head over small features starts near uniform. Priors are the local
// class frequencies with add-one (Laplace) smoothing, so that a class a client lacks keeps a
// finite logit. The server's covariance is the size-weighted mean of the clients' tied
// covariances (between-client spread of the means is not added).
type pFedFDA struct {
	beta, shrink, ridge float64
	cv                  bool
}

func newPFedFDA(p *PFedFDAParams) train.Method {
	return &pFedFDA{beta: p.Beta, shrink: p.Shrinkage, ridge: p.Ridge, cv: p.BetaMode != "fixed"}
}

// pFedFDAState holds the global Gaussian estimates (statsList; nil before the first
// aggregation) and each client's chosen beta (a one-tensor list "fda.beta"; nil before its
// first choice).
type pFedFDAState struct {
	Global tensor.List
	Beta   []tensor.List
}

// Slots stores them in the slots "fda_global" and "fda_beta".
func (s *pFedFDAState) Slots() []train.Slot {
	return []train.Slot{train.ListSlot("fda_global", &s.Global), train.ListsSlot("fda_beta", s.Beta)}
}

func (f *pFedFDA) Init(st *train.State, clients int) {
	st.Personal = make([]tensor.List, clients)
	st.Method = &pFedFDAState{Beta: make([]tensor.List, clients)}
	for c := range st.Personal {
		st.Personal[c] = st.Global
	}
}

// statsList encodes class statistics as tensors.
func statsList(s *classStats) tensor.List {
	means := tensor.New("fda.means", s.classes, s.d)
	for c, mu := range s.means {
		for k, v := range mu {
			means.Data[c*s.d+k] = float32(v)
		}
	}
	cov := tensor.New("fda.cov", s.d, s.d)
	for i, v := range s.cov {
		cov.Data[i] = float32(v)
	}
	counts := tensor.New("fda.counts", s.classes)
	for c, v := range s.counts {
		counts.Data[c] = float32(v)
	}
	return tensor.List{means, cov, counts}
}

// statsOf decodes statsList's tensors.
func statsOf(l tensor.List) *classStats {
	means, cov, counts := l[l.Find("fda.means")], l[l.Find("fda.cov")], l[l.Find("fda.counts")]
	classes, d := means.Shape[0], means.Shape[1]
	s := &classStats{d: d, classes: classes, counts: make([]float64, classes), means: make([][]float64, classes), cov: make([]float64, d*d)}
	for c := range s.means {
		s.means[c] = make([]float64, d)
		for k := range s.means[c] {
			s.means[c][k] = float64(means.Data[c*d+k])
		}
		s.counts[c] = float64(counts.Data[c])
		s.n += s.counts[c]
	}
	for i, v := range cov.Data {
		s.cov[i] = float64(v)
	}
	return s
}

// interpolate returns the means and covariance of step 1 (global may be nil).
func (f *pFedFDA) interpolate(local, global *classStats, beta float64) ([][]float64, []float64) {
	if global == nil {
		return local.means, local.cov
	}
	means := make([][]float64, local.classes)
	for c := range means {
		means[c] = make([]float64, local.d)
		for k := range means[c] {
			if local.counts[c] > 0 {
				means[c][k] = beta*local.means[c][k] + (1-beta)*global.means[c][k]
			} else {
				means[c][k] = global.means[c][k]
			}
		}
	}
	cov := make([]float64, len(local.cov))
	for i := range cov {
		cov[i] = beta*local.cov[i] + (1-beta)*global.cov[i]
	}
	return means, cov
}

// head returns the LDA classifier of (means, cov) with priors, cov regularized.
func (f *pFedFDA) head(means [][]float64, cov, priors []float64) (weight, bias []float32, err error) {
	d := len(means[0])
	reg := shrunk(cov, d, f.shrink)
	for i := 0; i < d; i++ {
		reg[i*d+i] += f.ridge
	}
	return ldaHead(means, reg, priors, d)
}

// withHead returns params with the classifier set to the LDA classifier of (means, cov).
func (f *pFedFDA) withHead(params tensor.List, means [][]float64, cov, priors []float64) (tensor.List, error) {
	w, b, err := f.head(means, cov, priors)
	if err != nil {
		return nil, err
	}
	out := params.Clone()
	copy(out[out.Find("classifier.weight")].Data, w)
	copy(out[out.Find("classifier.bias")].Data, b)
	return out, nil
}

// localPriors are the class frequencies of s with add-one smoothing.
func localPriors(s *classStats) []float64 {
	p := make([]float64, s.classes)
	for c, n := range s.counts {
		p[c] = (n + 1) / (s.n + float64(s.classes))
	}
	return p
}

// personalHead sets the personal head of a client with local statistics s.
func (f *pFedFDA) personalHead(params tensor.List, s, global *classStats, beta float64) (tensor.List, error) {
	means, cov := f.interpolate(s, global, beta)
	return f.withHead(params, means, cov, localPriors(s))
}

func (f *pFedFDA) localFeatures(l *train.Local, params tensor.List) ([]float32, *classStats, error) {
	feats, err := l.Model().Features(params, l.TrainX(), train.EvalBatch)
	if err != nil {
		return nil, nil, err
	}
	return feats, featureStats(feats, l.TrainY(), l.Model().FeatureDim(), l.Model().Spec().NumClasses), nil
}

// betaGrid are the candidate values of β for cross-validation.
var betaGrid = []float64{0, 0.25, 0.5, 0.75, 1}

// betaCV picks the β of betaGrid whose head, fitted on one half of the client's features
// and interpolated with the global estimates, has the smallest cross-entropy on the other
// half, summed over the two halves (2-fold cross-validation; folds from perm, ties to the
// smaller β). It returns fallback when there is no global estimate or too little data.
func (f *pFedFDA) betaCV(feats []float32, y []int32, d, classes int, global *classStats, perm []int, fallback float64) (float64, error) {
	n := len(y)
	if global == nil || n < 4 {
		return fallback, nil
	}
	fold := func(k int) ([]float32, []int32) {
		var x []float32
		var lab []int32
		for j, i := range perm {
			if j%2 == k {
				x = append(x, feats[i*d:(i+1)*d]...)
				lab = append(lab, y[i])
			}
		}
		return x, lab
	}
	loss := make([]float64, len(betaGrid))
	for k := 0; k < 2; k++ {
		fx, fy := fold(1 - k)
		hx, hy := fold(k)
		s := featureStats(fx, fy, d, classes)
		for b, beta := range betaGrid {
			means, cov := f.interpolate(s, global, beta)
			w, bias, err := f.head(means, cov, localPriors(s))
			if err != nil {
				return 0, err
			}
			loss[b] += crossEntropyOf(w, bias, hx, hy, d, classes)
		}
	}
	best := 0
	for b := range loss {
		if loss[b] < loss[best] {
			best = b
		}
	}
	return betaGrid[best], nil
}

// crossEntropyOf is the summed cross-entropy of the linear classifier (w [d, classes]
// row-major, b) on the features x with labels y.
func crossEntropyOf(w, b, x []float32, y []int32, d, classes int) float64 {
	sum := 0.0
	logits := make([]float64, classes)
	for i, label := range y {
		f := x[i*d : (i+1)*d]
		mx := math.Inf(-1)
		for c := 0; c < classes; c++ {
			z := float64(b[c])
			for k, v := range f {
				z += float64(v) * float64(w[k*classes+c])
			}
			logits[c] = z
			mx = math.Max(mx, z)
		}
		lse := 0.0
		for _, z := range logits {
			lse += math.Exp(z - mx)
		}
		sum += mx + math.Log(lse) - logits[label]
	}
	return sum
}

func (f *pFedFDA) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	var global *classStats
	if g := st.Method.(*pFedFDAState).Global; g != nil {
		global = statsOf(g)
	}
	beta := f.beta
	if b := st.Method.(*pFedFDAState).Beta[c]; b != nil {
		beta = float64(b[0].Data[0])
	}
	_, s, err := f.localFeatures(l, st.Global)
	if err != nil {
		return train.Upload{}, err
	}
	theta, err := f.personalHead(st.Global, s, global, beta)
	if err != nil {
		return train.Upload{}, err
	}
	body := invert(headMask(theta))
	if ones, _ := count(body); ones > 0 {
		if theta, err = l.Train(theta, body, l.LR(), l.Epochs(), "shuffle"); err != nil {
			return train.Upload{}, err
		}
	}
	feats, s, err := f.localFeatures(l, theta)
	if err != nil {
		return train.Upload{}, err
	}
	if f.cv {
		perm := rng.New(l.Seed(), l.Round(), l.Client(), "pfedfda-cv").Perm(len(l.TrainY()))
		if beta, err = f.betaCV(feats, l.TrainY(), s.d, s.classes, global, perm, beta); err != nil {
			return train.Upload{}, err
		}
	}
	personal, err := f.personalHead(theta, s, global, beta)
	if err != nil {
		return train.Upload{}, err
	}
	kept := tensor.List{{Name: "fda.beta", Shape: []int{1}, Data: []float32{float32(beta)}}}
	return train.Upload{Params: theta, Personal: personal, Stats: append(statsList(s), kept...)}, nil
}

func (f *pFedFDA) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	ids, models, weights := bySize(uploads, sizes)
	var g *classStats
	for _, c := range ids {
		s := statsOf(uploads[c].Stats)
		if g == nil {
			g = &classStats{d: s.d, classes: s.classes, counts: make([]float64, s.classes), means: make([][]float64, s.classes), cov: make([]float64, len(s.cov))}
			for k := range g.means {
				g.means[k] = make([]float64, s.d)
			}
		}
		for k, n := range s.counts {
			g.counts[k] += n
			for j, v := range s.means[k] {
				g.means[k][j] += n * v
			}
		}
		for j, v := range s.cov {
			g.cov[j] += s.n * v
		}
		g.n += s.n
	}
	for k, n := range g.counts {
		if n > 0 {
			for j := range g.means[k] {
				g.means[k][j] /= n
			}
		}
	}
	for j := range g.cov {
		g.cov[j] /= math.Max(g.n, 1)
	}
	avg, err := train.WeightedAverage(models, weights)
	if err != nil {
		return err
	}
	uniform := make([]float64, g.classes)
	for k := range uniform {
		uniform[k] = 1 / float64(g.classes)
	}
	if st.Global, err = f.withHead(avg, g.means, g.cov, uniform); err != nil {
		return err
	}
	st.Method.(*pFedFDAState).Global = statsList(g)
	for _, c := range ids {
		st.Personal[c] = uploads[c].Personal
		u := uploads[c].Stats
		st.Method.(*pFedFDAState).Beta[c] = tensor.List{u[u.Find("fda.beta")]}
	}
	return nil
}

func (f *pFedFDA) EvalModel(st *train.State, c int) tensor.List { return st.Personal[c] }

// Comm: the body and the Gaussian estimates (class means, covariance, class counts) each
// way; the head is computed on the client and never sent.
func (f *pFedFDA) Comm(st *train.State, c int, u train.Upload) (int64, int64) {
	body := int64(u.Params.NumElements())
	for _, t := range u.Params {
		if isClassifier(t.Name) {
			body -= int64(len(t.Data))
		}
	}
	stats := int64(u.Stats.NumElements()) - 1 // fda.beta stays on the client
	return 4 * (body + stats), 4 * (body + stats)
}
