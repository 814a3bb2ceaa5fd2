package methods

import (
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/rng"
	"github.com/fedpipe/fedpipe/stages/train"
)

// PFedFDAParams are pfedfda's parameters.
type PFedFDAParams struct {
	Impl string `param:"impl" choices:"paper|flbench" doc:"paper: pFedFDA's own code (cj-mclaughlin/pFedFDA): the body trains under the LDA head of the global Gaussian estimates, the server averages the clients' interpolated estimates, each client is evaluated with the global body and its interpolated head; flbench: what FL-bench (FedOBP's tables) ran: its server never aggregates the estimates, so training is FedAvg's and the Gaussian head is fitted at evaluation only, against the initial random global estimates"`
}

func init() {
	// Revision 1: impl paper trains every client in the run's last round (LastRoundAll).
	// impl=paper revision 1: it draws each client with probability participation
	// (BernoulliSampling); impl flbench's results are unchanged, so their keys are too.
	train.Register(manifest.MethodDef{Name: "pfedfda", Display: "pFedFDA", Cost: manifest.CostIs(1, "flbench: FedAvg's training (the Gaussian head is fitted at evaluation); paper: the features come from the training passes themselves, the LDA fit is per client"), Extension: pfedfdaExtension, Personal: true, Features: true, Revision: 1,
		OptionRevisions: map[string]int{"impl=paper": 1},
		Doc:             "pFedFDA (McLaughlin & Su, NeurIPS 2024): shared feature extractor; each client's head is the LDA classifier of class-conditional Gaussian estimates of its features (tied covariance), interpolated with the global estimates by weights fitted by cross-validation; the body trains under the LDA head of the global estimates."},
		newPFedFDA)
}

// pFedFDA is pFedFDA (McLaughlin & Su, "Personalized Federated Learning via Feature
// Distribution Adaptation"). Features (the classifier's input) of class c are modelled as
// N(μ_c, Σ), one covariance for every class, and a head is the LDA classifier of such
// estimates (fdaHead). The numerics are in fda.go.
//
// impl paper follows the authors' code (cj-mclaughlin/pFedFDA):
//
//   - The global estimates start as means uniform in [0, 1) (stream "pfedfda-means") and
//     Σ = I (servers/server_fedfda.py:15-16).
//   - Client k sets the head of the global body to the LDA head of the global estimates with
//     its own class priors and trains the body alone under it, with the run's optimizer, for
//     the local epochs; mini-batches of fewer than the batch size are dropped (the authors'
//     loader drops the last, client_base.py:166-170). The features each step computed
//     (training mode, before the step) are kept (client_fedfda.py:50-79).
//   - On those features it fits β = (β_m, β_c) (solveBeta), estimates its Gaussians
//     (fdaEstimate) and uploads the body and the interpolated estimates
//     β_m·μ̂ + (1 − β_m)·μ_g, β_c·Σ̂ + (1 − β_c)·Σ_g (client_fedfda.py:81-94).
//   - The server averages the models and the interpolated estimates, all weighted by
//     training-set size (server_base.py:36-44, server_fedfda.py:47-58).
//   - Each round draws every client independently with probability participation, so the
//     number that trains varies (server_base.py:26-34, torch.bernoulli;
//     BernoulliSampling); a round that draws none trains none and keeps the models, where
//     the authors' code would average an empty set (server_base.py:36-44).
//   - The run's last round trains every client, whatever the participation
//     (server_fedfda.py:24-25: "full participation on last round"; LastRoundAll).
//   - After each round the run evaluates, every client gets the global body with the head
//     of its interpolated estimates, fitted afresh on the features (evaluation mode) of its
//     training data, less the samples its loader's last short batch would drop, under that
//     body; the β fitted there is kept as the client's fallback (server_fedfda.py:73-99).
//     Estimates there use a class's own mean only where it has more than 2 samples.
//     (FL-bench also centres the scatter of a class with 2 samples or fewer on the global
//     mean, src/client/pfedfda.py:267-275; the authors' code centres it on its own.)
//
// impl flbench follows FL-bench's pFedFDA (uglyghost/FedOBP at b55d0fa), whose server
// defines aggregate (src/server/pfedfda.py:71-104) but whose loop calls
// aggregate_client_updates (src/server/fedavg.py:466-471, :625): nothing ever updates the
// global estimates and training is FedAvg's, linear head included (the client overrides
// no training code). At each evaluation, every client's model is the global model with the
// LDA head fitted on all its training features as above, against the initial global
// estimates; a failed β fit leaves (1, 0.5), the server's initial values
// (src/server/pfedfda.py:56-57; src/client/pfedfda.py:59-107).
//
// The run's fine-tuning (finetune_epochs), where set, trains every parameter of that
// model, the LDA head included, as FL-bench's finetune does (src/client/fedavg.py:318-335);
// pFedFDA's own code evaluates without fine-tuning (its p_epochs, main.py:39, is unused).
type pFedFDA struct {
	flbench bool
}

func newPFedFDA(p *PFedFDAParams) train.Method {
	return &pFedFDA{flbench: p.Impl == "flbench"}
}

// LastRoundAll implements train.LastRoundAll: impl paper's last round trains every client.
func (f *pFedFDA) LastRoundAll() bool { return !f.flbench }

// BernoulliSampling implements train.BernoulliSampler: impl paper draws each client with
// probability participation, as pFedFDA's own code does; FL-bench draws a fixed number.
func (f *pFedFDA) BernoulliSampling() bool { return !f.flbench }

// pFedFDAState holds the global Gaussian estimates (fda.means [classes, d], fda.cov [d, d];
// nil before the first aggregation, and always with impl flbench) and each client's last
// fitted β (a one-tensor list "fda.beta" [2]: β_m, β_c; nil before its first fit).
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

// initialGauss are the global estimates before any aggregation: means uniform in [0, 1)
// from the run's stream "pfedfda-means", covariance I.
func initialGauss(seed int64, classes, d int) fdaGauss {
	r := rng.New(seed, 0, rng.Global, "pfedfda-means")
	g := fdaGauss{means: make([][]float64, classes), cov: make([]float64, d*d)}
	for c := range g.means {
		g.means[c] = make([]float64, d)
		for k := range g.means[c] {
			g.means[c][k] = float64(float32(r.Float64()))
		}
	}
	for i := 0; i < d; i++ {
		g.cov[i*d+i] = 1
	}
	return g
}

// gaussList encodes estimates as tensors.
func gaussList(g fdaGauss) tensor.List {
	classes, d := len(g.means), len(g.means[0])
	means := tensor.New("fda.means", classes, d)
	for c, mu := range g.means {
		for k, v := range mu {
			means.Data[c*d+k] = float32(v)
		}
	}
	cov := tensor.New("fda.cov", d, d)
	for i, v := range g.cov {
		cov.Data[i] = float32(v)
	}
	return tensor.List{means, cov}
}

// gaussOf decodes gaussList's tensors.
func gaussOf(l tensor.List) fdaGauss {
	means, cov := l[l.Find("fda.means")], l[l.Find("fda.cov")]
	classes, d := means.Shape[0], means.Shape[1]
	g := fdaGauss{means: make([][]float64, classes), cov: make([]float64, d*d)}
	for c := range g.means {
		g.means[c] = make([]float64, d)
		for k := range g.means[c] {
			g.means[c][k] = float64(means.Data[c*d+k])
		}
	}
	for i, v := range cov.Data {
		g.cov[i] = float64(v)
	}
	return g
}

// global returns the global estimates the clients of l's run receive.
func (f *pFedFDA) global(st *train.State, l *train.Local) fdaGauss {
	if g := st.Method.(*pFedFDAState).Global; g != nil && !f.flbench {
		return gaussOf(g)
	}
	return initialGauss(l.Seed(), l.Model().Spec().NumClasses, l.Model().FeatureDim())
}

// withFDAHead returns params with the classifier set to the LDA head of g with priors.
func withFDAHead(params tensor.List, g fdaGauss, priors []float64) (tensor.List, error) {
	w, b, err := fdaHead(g, priors, len(g.means[0]))
	if err != nil {
		return nil, err
	}
	out := params.Clone()
	copy(out[out.Find("classifier.weight")].Data, w)
	copy(out[out.Find("classifier.bias")].Data, b)
	return out, nil
}

// betaOf returns client c's last fitted β, or the authors' starting values: (0.5, 0.5) in
// their own code (client_fedfda.py:14-15), (1, 0.5) in FL-bench's server (never updated
// there).
func (f *pFedFDA) betaOf(st *train.State, c int) [2]float64 {
	if b := st.Method.(*pFedFDAState).Beta[c]; b != nil && !f.flbench {
		return [2]float64{float64(b[0].Data[0]), float64(b[0].Data[1])}
	}
	if f.flbench {
		return [2]float64{1, 0.5}
	}
	return [2]float64{0.5, 0.5}
}

func betaList(b [2]float64) tensor.List {
	return tensor.List{{Name: "fda.beta", Shape: []int{2}, Data: []float32{float32(b[0]), float32(b[1])}}}
}

func (f *pFedFDA) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	if f.flbench {
		return fedAvg{}.Train(l, st, c)
	}
	d, classes := l.Model().FeatureDim(), l.Model().Spec().NumClasses
	global := f.global(st, l)
	priors := fdaPriors(l.TrainY(), classes)
	theta, err := withFDAHead(st.Global, global, priors)
	if err != nil {
		return train.Upload{}, err
	}
	body := invert(headMask(theta))
	opt := newGoSGD(l.Optimizer())
	full := min(l.BatchSize(), l.TrainSize())
	var feats []float32
	var labels []int32
	err = l.Batches(l.Epochs(), "shuffle", func(e int, x []float32, y []int32) error {
		if len(y) < full {
			return nil // the authors' loader drops the last short batch
		}
		g, loss, fx, err := l.Model().FeatureGradient(theta, x, y, make([]float32, len(y)*d), make([]float32, len(y)), 0)
		if err != nil {
			return err
		}
		if err := checkLoss(loss, e); err != nil {
			return err
		}
		l.Count(int64(len(y)), nil)
		feats = append(feats, fx...)
		labels = append(labels, y...)
		opt.step("", theta, g, body, 1)
		setStats(theta, l.Model().BatchStats())
		return nil
	})
	if err != nil {
		return train.Upload{}, err
	}
	beta := solveBeta(feats, labels, d, classes, global, priors, rng.New(l.Seed(), l.Round(), c, "pfedfda-cv"), f.betaOf(st, c), false)
	adaptive := fdaEstimate(feats, labels, d, classes, global, 0, false).mix(global, beta[0], beta[1])
	return train.Upload{Params: theta, Stats: append(gaussList(adaptive), betaList(beta)...)}, nil
}

func (f *pFedFDA) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	if f.flbench {
		return fedAvg{}.Finish(st, uploads, sizes)
	}
	ids, models, weights := bySize(uploads, sizes)
	avg, err := train.WeightedAverage(models, weights)
	if err != nil {
		return err
	}
	total := 0.0
	for _, w := range weights {
		total += w
	}
	var g fdaGauss
	for i, c := range ids {
		u := uploads[c].Stats
		e := gaussOf(u)
		w := weights[i] / total
		if g.cov == nil {
			g = fdaGauss{means: make([][]float64, len(e.means)), cov: make([]float64, len(e.cov))}
			for k := range g.means {
				g.means[k] = make([]float64, len(e.means[k]))
			}
		}
		for k, mu := range e.means {
			for j, v := range mu {
				g.means[k][j] += w * v
			}
		}
		for j, v := range e.cov {
			g.cov[j] += w * v
		}
		st.Method.(*pFedFDAState).Beta[c] = tensor.List{u[u.Find("fda.beta")]}
	}
	st.Global = avg
	st.Method.(*pFedFDAState).Global = gaussList(g)
	return nil
}

// EndRound sets, after each round the run evaluates, every client's model: the global
// body with the LDA head of its interpolated estimates fitted on its training features
// (see pFedFDA).
func (f *pFedFDA) EndRound(st *train.State, round int, local func(c int) *train.Local) error {
	for c := range st.Personal {
		l := local(c)
		if !l.Evaluates() {
			return nil
		}
		p, beta, err := f.personal(l, st, c)
		if err != nil {
			return fmt.Errorf("client %d: %w", c, err)
		}
		st.Personal[c] = p
		if !f.flbench {
			st.Method.(*pFedFDAState).Beta[c] = betaList(beta)
		}
	}
	return nil
}

// personal is client c's evaluation model fitted under the global body, and its β.
func (f *pFedFDA) personal(l *train.Local, st *train.State, c int) (tensor.List, [2]float64, error) {
	d, classes := l.Model().FeatureDim(), l.Model().Spec().NumClasses
	x, y := l.TrainX(), l.TrainY()
	if n, b := len(y), l.BatchSize(); !f.flbench && n > b && n%b != 0 {
		// The authors' compute_feats reads the shuffled loader that drops its last short
		// batch (client_base.py:199-216, :166-170).
		size := len(x) / n
		keep := rng.New(l.Seed(), l.Round(), c, "pfedfda-eval").Perm(n)[:n-n%b]
		sx, sy := make([]float32, 0, len(keep)*size), make([]int32, 0, len(keep))
		for _, i := range keep {
			sx = append(sx, x[i*size:(i+1)*size]...)
			sy = append(sy, y[i])
		}
		x, y = sx, sy
	}
	feats, err := l.Model().Features(st.Global, x, train.EvalBatch)
	if err != nil {
		return nil, [2]float64{}, err
	}
	global := f.global(st, l)
	priors := fdaPriors(l.TrainY(), classes)
	beta := solveBeta(feats, y, d, classes, global, priors, rng.New(l.Seed(), l.Round(), c, "pfedfda-eval-cv"), f.betaOf(st, c), f.flbench)
	adaptive := fdaEstimate(feats, y, d, classes, global, 2, f.flbench).mix(global, beta[0], beta[1])
	p, err := withFDAHead(st.Global, adaptive, priors)
	return p, beta, err
}

func (f *pFedFDA) EvalModel(st *train.State, c int) tensor.List { return st.Personal[c] }

// ConcurrentClients: impl flbench trains as FedAvg does; impl paper reads the model's
// features through Local.Model and trains one client at a time.
func (f *pFedFDA) ConcurrentClients() bool { return f.flbench }

// Comm: the model each way, and with impl paper the global estimates down and the
// client's interpolated estimates up (means and covariance; β stays on the client).
func (f *pFedFDA) Comm(st *train.State, c int, u train.Upload) (int64, int64) {
	model := train.ModelBytes(u.Params)
	if f.flbench {
		return model, model
	}
	stats := 4 * int64(u.Stats.NumElements()-2)
	return model + stats, model + stats
}

// pfedfdaExtension: pFedFDA's own code (impl paper, the default) trains every client in its
// last round (LastRoundAll), so a longer run never continues a shorter one; FL-bench's fits
// the clients' evaluation models when it evaluates, so it continues one that ended on an
// evaluation the longer run makes too.
func pfedfdaExtension(options map[string]string) manifest.Extension {
	if options["impl"] == "flbench" {
		return manifest.ExtendAtEvaluation
	}
	return manifest.ExtendNever
}
