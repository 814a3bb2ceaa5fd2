package methods

import (
	"math"
	"sort"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FedPACParams are fedpac's parameters.
type FedPACParams struct {
	Lambda     float32 `param:"lambda" default:"1.0" check:"ge0" doc:"weight of the feature-alignment term (1.0 in the paper)"`
	HeadEpochs int     `param:"head_epochs" default:"1" check:"ge0" doc:"epochs of head-only training before the body (1 in the paper)"`
}

func init() {
	train.Register(manifest.MethodDef{Name: "fedpac", Display: "FedPAC", Cost: manifest.PlainTraining, Extension: manifest.ExtensionIs(manifest.ExtendAlways), Personal: true, Features: true,
		Doc: "FedPAC (Xu et al., ICLR 2023): shared body trained with feature alignment to the global class centroids (lambda), personal heads trained first each round; the server combines heads per client with weights from a variance-bias quadratic program over the clients' feature statistics."},
		newFedPAC)
}

// fedPAC is FedPAC (Xu et al., ICLR 2023, "Personalized Federated Learning with Feature
// Alignment and Classifier Collaboration"). The body (every tensor but classifier.*) is
// shared, the head personal. In a round, client i receives the global body, the global
// class centroids c_y and its personal head, and:
//
//  1. computes, with the received model, its class feature means μ_i,c, class priors
//     p_i(c) and feature variance V_i = E‖f‖² − Σ_c p_i(c)‖μ_i,c‖² (the statistics of
//     classifier collaboration);
//  2. trains the head alone for head_epochs (body fixed);
//  3. trains the body alone (head fixed) for the run's local epochs on
//     CE + λ·(1/B)·Σ_b (1/d)·‖f(x_b) − c_{y_b}‖² — feature alignment to the global
//     centroids, the squared distance averaged over the d features as in the authors' code
//     (a mean-squared error; the sum over 512 CNN features lets the penalty dominate and
//     collapse the features); samples of a class with no global centroid yet are not
//     aligned;
//  4. computes its class centroids with the trained model and uploads body, head,
//     centroids and the statistics of 1.
//
// The server averages the bodies by training-set size and the centroids by class count
// (the new global centroids), and combines heads: for each sampled client i it solves
//
//	min_α  Σ_j α_j²·V_j/n_j + Σ_c p_i(c)·‖Σ_j α_j·μ_j,c − μ_i,c‖²   over the simplex,
//
// a quadratic program over the sampled clients j (a client lacking class c counts μ_j,c =
// 0), and gives client i the head Σ_j α_j·head_j. Clients are evaluated with the global
// body and their personal heads.
//
// Choices, documented: the variance term divides V_j by the client's sample count n_j (the
// variance of a head estimated from n_j samples); the QP is solved by projected gradient
// descent (2,000 steps, step from a Gershgorin bound).
type fedPAC struct {
	lambda     float32
	headEpochs int
}

func newFedPAC(p *FedPACParams) train.Method {
	return &fedPAC{lambda: p.Lambda, headEpochs: p.HeadEpochs}
}

// fedPACState holds the global class centroids and their counts (nil before the first
// round's aggregation).
type fedPACState struct{ Centroids tensor.List }

// Slots stores the centroids in the slot "pac_centroids".
func (s *fedPACState) Slots() []train.Slot {
	return []train.Slot{train.ListSlot("pac_centroids", &s.Centroids)}
}

func (f *fedPAC) Init(st *train.State, clients int) {
	st.Personal = make([]tensor.List, clients)
	st.Method = &fedPACState{}
	for c := range st.Personal {
		st.Personal[c] = st.Global
	}
}

// centroidTargets returns, for the samples with labels y, the global centroid of each
// label ([B, d]) and a weight of 1 where that centroid exists.
func centroidTargets(cent tensor.List, y []int32, d int) ([]float32, []float32) {
	targets, weights := make([]float32, len(y)*d), make([]float32, len(y))
	if cent == nil {
		return targets, weights
	}
	means, counts := cent[cent.Find("pac.centroids")].Data, cent[cent.Find("pac.counts")].Data
	for b, label := range y {
		if counts[label] > 0 {
			copy(targets[b*d:(b+1)*d], means[int(label)*d:(int(label)+1)*d])
			weights[b] = 1
		}
	}
	return targets, weights
}

// trainAligned trains the entries of params where mask is 1 for epochs on the
// cross-entropy plus λ times the alignment of the features to the centroids in cent
// (stream "shuffle"), with the run's optimizer applied in Go.
func trainAligned(l *train.Local, params, mask, cent tensor.List, lambda float32, epochs int) (tensor.List, error) {
	theta := params.Clone()
	opt := newGoSGD(l.Optimizer())
	d := l.Model().FeatureDim()
	err := l.Batches(epochs, "shuffle", func(e int, x []float32, y []int32) error {
		targets, weights := centroidTargets(cent, y, d)
		g, loss, _, err := l.Model().FeatureGradient(theta, x, y, targets, weights, lambda)
		if err != nil {
			return err
		}
		if err := checkLoss(loss, e); err != nil {
			return err
		}
		opt.step("", theta, g, mask, 1)
		setStats(theta, l.Model().BatchStats())
		return nil
	})
	return theta, err
}

func (f *fedPAC) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	head := headMask(st.Global)
	theta := merge(st.Global, st.Personal[c], head)
	d, classes := l.Model().FeatureDim(), l.Model().Spec().NumClasses
	feats, err := l.Model().Features(theta, l.TrainX(), train.EvalBatch)
	if err != nil {
		return train.Upload{}, err
	}
	before := featureMoments(feats, l.TrainY(), d, classes, false)
	if theta, err = l.Fit(theta, train.Fit{Mask: head, Stream: "fedpac-head", Epochs: train.Exactly(f.headEpochs)}); err != nil {
		return train.Upload{}, err
	}
	body := invert(head)
	if ones, _ := count(body); ones > 0 {
		lambda := f.lambda / float32(d) // the mean over features, not the sum
		if theta, err = trainAligned(l, theta, body, st.Method.(*fedPACState).Centroids, lambda, l.Epochs()); err != nil {
			return train.Upload{}, err
		}
	}
	if feats, err = l.Model().Features(theta, l.TrainX(), train.EvalBatch); err != nil {
		return train.Upload{}, err
	}
	after := featureMoments(feats, l.TrainY(), d, classes, false)
	v := before.sqnorm
	for k, mu := range before.means {
		sq := 0.0
		for _, x := range mu {
			sq += x * x
		}
		v -= before.counts[k] / math.Max(before.n, 1) * sq
	}
	stats := tensor.List{
		matrixTensor("pac.means", before.means),
		matrixTensor("pac.centroids", after.means),
		vectorTensor("pac.counts", before.counts),
		{Name: "pac.v", Shape: []int{1}, Data: []float32{float32(math.Max(v, 0) / math.Max(before.n, 1))}},
	}
	return train.Upload{Params: theta, Stats: stats}, nil
}

// matrixTensor encodes rows as one [len(rows), len(rows[0])] tensor.
func matrixTensor(name string, rows [][]float64) tensor.Tensor {
	t := tensor.New(name, len(rows), len(rows[0]))
	for i, r := range rows {
		for j, v := range r {
			t.Data[i*len(r)+j] = float32(v)
		}
	}
	return t
}

// vectorTensor encodes v as one tensor.
func vectorTensor(name string, v []float64) tensor.Tensor {
	t := tensor.New(name, len(v))
	for i, x := range v {
		t.Data[i] = float32(x)
	}
	return t
}

func (f *fedPAC) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	ids, models, weights := bySize(uploads, sizes)
	avg, err := train.WeightedAverage(models, weights)
	if err != nil {
		return err
	}
	st.Global = avg
	// Global centroids: class-count-weighted means of the clients' centroids.
	first := uploads[ids[0]].Stats
	cshape := first[first.Find("pac.centroids")].Shape
	classes, d := cshape[0], cshape[1]
	cent, total := tensor.New("pac.centroids", classes, d), tensor.New("pac.counts", classes)
	acc := make([]float64, classes*d)
	for _, c := range ids {
		s := uploads[c].Stats
		cm, cn := s[s.Find("pac.centroids")].Data, s[s.Find("pac.counts")].Data
		for k := 0; k < classes; k++ {
			total.Data[k] += cn[k]
			for j := 0; j < d; j++ {
				acc[k*d+j] += float64(cn[k]) * float64(cm[k*d+j])
			}
		}
	}
	for k := 0; k < classes; k++ {
		for j := 0; j < d; j++ {
			if total.Data[k] > 0 {
				cent.Data[k*d+j] = float32(acc[k*d+j] / float64(total.Data[k]))
			}
		}
	}
	st.Method.(*fedPACState).Centroids = tensor.List{cent, total}
	// Classifier collaboration.
	for _, i := range ids {
		alpha := collabWeights(uploads, ids, i)
		heads := make([]tensor.List, len(ids))
		for j, c := range ids {
			heads[j] = tensorsNamed(uploads[c].Params, isClassifier)
		}
		combined, err := train.WeightedAverage(heads, alpha)
		if err != nil {
			return err
		}
		p := uploads[i].Params.Clone()
		for _, t := range combined {
			copy(p[p.Find(t.Name)].Data, t.Data)
		}
		st.Personal[i] = p
	}
	return nil
}

// tensorsNamed returns the tensors of l whose names satisfy keep.
func tensorsNamed(l tensor.List, keep func(string) bool) tensor.List {
	var out tensor.List
	for _, t := range l {
		if keep(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// collabWeights solves client i's classifier-collaboration program over the uploads of ids.
func collabWeights(uploads map[int]train.Upload, ids []int, i int) []float64 {
	n := len(ids)
	si := uploads[i].Stats
	mi, ci := si[si.Find("pac.means")], si[si.Find("pac.counts")].Data
	classes, d := mi.Shape[0], mi.Shape[1]
	ni := 0.0
	for _, v := range ci {
		ni += float64(v)
	}
	a := make([]float64, n*n)
	diff := make([][]float64, n) // per client j: sqrt(p_i(c))·(μ_j,c − μ_i,c), stacked over c
	for j, c := range ids {
		s := uploads[c].Stats
		mj := s[s.Find("pac.means")].Data
		diff[j] = make([]float64, classes*d)
		for k := 0; k < classes; k++ {
			w := math.Sqrt(float64(ci[k]) / math.Max(ni, 1))
			for x := 0; x < d; x++ {
				diff[j][k*d+x] = w * (float64(mj[k*d+x]) - float64(mi.Data[k*d+x]))
			}
		}
		a[j*n+j] += float64(s[s.Find("pac.v")].Data[0])
	}
	for j := 0; j < n; j++ {
		for k := j; k < n; k++ {
			dot := 0.0
			for x, v := range diff[j] {
				dot += v * diff[k][x]
			}
			a[j*n+k] += dot
			if k != j {
				a[k*n+j] += dot
			}
		}
	}
	return simplexQP(a, n)
}

// simplexQP minimizes αᵀAα over the probability simplex (A symmetric positive
// semi-definite, n×n) by projected gradient descent from the uniform point.
func simplexQP(a []float64, n int) []float64 {
	alpha := make([]float64, n)
	for j := range alpha {
		alpha[j] = 1 / float64(n)
	}
	bound := 0.0 // Gershgorin bound on the largest eigenvalue of 2A
	for j := 0; j < n; j++ {
		s := 0.0
		for k := 0; k < n; k++ {
			s += math.Abs(a[j*n+k])
		}
		bound = math.Max(bound, 2*s)
	}
	if bound == 0 {
		return alpha
	}
	step := 1 / bound
	next := make([]float64, n)
	for it := 0; it < 2000; it++ {
		for j := 0; j < n; j++ {
			g := 0.0
			for k := 0; k < n; k++ {
				g += 2 * a[j*n+k] * alpha[k]
			}
			next[j] = alpha[j] - step*g
		}
		projectSimplex(next)
		copy(alpha, next)
	}
	return alpha
}

// projectSimplex replaces v by its Euclidean projection onto the probability simplex.
func projectSimplex(v []float64) {
	u := append([]float64(nil), v...)
	sort.Sort(sort.Reverse(sort.Float64Slice(u)))
	cum, theta := 0.0, 0.0
	for j, x := range u {
		cum += x
		if t := (cum - 1) / float64(j+1); x-t > 0 {
			theta = t
		}
	}
	for j := range v {
		v[j] = math.Max(v[j]-theta, 0)
	}
}

func (f *fedPAC) EvalModel(st *train.State, c int) tensor.List {
	return merge(st.Global, st.Personal[c], headMask(st.Global))
}

// Comm: down, the body, the global centroids and the client's head; up, body and head,
// the centroids and the collaboration statistics.
func (f *fedPAC) Comm(st *train.State, c int, u train.Upload) (int64, int64) {
	var cent int64
	if g := st.Method.(*fedPACState).Centroids; g != nil {
		cent = int64(g.NumElements())
	}
	return 4 * (int64(st.Global.NumElements()) + cent), 4 * int64(u.Params.NumElements()+u.Stats.NumElements())
}
