package methods

import (
	"fmt"
	"math"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FLUTEParams are flute's parameters.
type FLUTEParams struct {
	LambdaNC2  float64 `param:"lambda_nc2" default:"1.0" check:"ge0" doc:"weight of the head's ETF-geometry term (our default)"`
	LambdaNC3  float64 `param:"lambda_nc3" default:"0.1" check:"ge0" doc:"weight of the head-feature alignment terms (our default)"`
	HeadEpochs int     `param:"head_epochs" default:"1" check:"ge0" doc:"epochs of head-only training per round before the body"`
	Impl       string  `param:"impl" choices:"paper|flbench" doc:"paper: the paper's two phases (above); flbench: FL-bench's FLUTE as FedOBP's tables ran it (head only, every local epoch, with the lambda1/lambda2 terms; the server's nc2_lr step on the heads)"`
	Lambda1    float64 `param:"lambda1" default:"0.25" check:"ge0" doc:"flbench: weight of the head's neural-collapse term (FL-bench --lamda1)"`
	Lambda2    float64 `param:"lambda2" default:"0.0025" check:"ge0" doc:"flbench: weight of the squared Frobenius norm of the head weight (FL-bench --lamda2)"`
	NC2LR      float64 `param:"nc2_lr" default:"0.5" check:"ge0" doc:"flbench: step size of the server's neural-collapse step on the uploaded head weights (FL-bench --nc2_lr; 0: none)"`
	Workers    int     `param:"workers" default:"2" check:"gt0" doc:"flbench: ray workers of the FL-bench run (2 in the logged FMNIST runs, mode parallel; 1: serial mode); the server's step pairs heads and clients by completion order, see rayQueue"`
}

func init() {
	// BNRevision 1: impl flbench moves the body's BatchNorm running statistics (fluteFLBench).
	train.Register(manifest.MethodDef{Name: "flute", Display: "FLUTE", Cost: manifest.PlainTraining, Extension: manifest.ExtensionIs(manifest.ExtendAlways), Personal: true, Features: true, BNRevision: 1,
		Doc: "FLUTE (Liu et al., ICML 2024): shared body, personal heads; the head trains first with neural-collapse regularizers (NC2: its Gram matrix toward a simplex ETF over the client's classes; NC3: toward the class-mean features), then the body with its features pulled toward the scaled head columns."},
		newFLUTE)
}

// flute is FLUTE (Liu, Shen and Yang, ICML 2024, "Federated Representation Learning in
// the Under-Parameterized Regime"): a shared representation (the body) and personal heads
// (classifier.*), with regularizers that steer the heads and the features toward the
// neural-collapse geometry, so that a representation too small for every client's task
// still serves all of them. Client i, with the classes K_i present in its training data:
//
//  1. trains its head alone for head_epochs (body fixed) on
//     CE + lambda_nc2·‖ŴᵀŴ/‖ŴᵀŴ‖_F − E/‖E‖_F‖²_F + lambda_nc3·‖W/‖W‖_F − H/‖H‖_F‖²_F,
//     where Ŵ are the head's columns of the classes in K_i, E = I − 11ᵀ/|K_i| is the Gram
//     matrix of a simplex equiangular tight frame over K_i, W the head's columns and H the
//     class-mean features (both over K_i; H fixed from the features at the start of the
//     round);
//  2. trains the body alone (head fixed) for the run's local epochs on
//     CE + lambda_nc3·(1/B)·Σ_b ‖f(x_b) − t_{y_b}‖², t_c = ‖H‖_F·w_c/‖W‖_F, and uploads it.
//
// The server averages the bodies by training-set size; each client is evaluated with the
// global body and its own head.
//
// Simplifications, documented: the NC3 alignment of the body uses the per-sample surrogate
// in 2, whose minimizer over the class means is the same as that of the paper's normalized
// term (class means equal to ‖H‖·W/‖W‖) but which is simpler to differentiate; heads stay
// personal (never averaged); defaults (lambda_nc2 1, lambda_nc3 0.1, head_epochs 1) are
// ours. With both weights 0 FLUTE is FedRep with head_epochs (up to the rounding of
// applying the optimizer in Go).
//
// impl flbench is FL-bench's FLUTE (see fluteFLBench in flute_flbench.go).
type flute struct {
	nc2, nc3   float64
	headEpochs int
	flbench    bool
	fb         fluteFLBench
}

func newFLUTE(p *FLUTEParams) train.Method {
	return &flute{nc2: p.LambdaNC2, nc3: p.LambdaNC3, headEpochs: p.HeadEpochs, flbench: p.Impl == "flbench",
		fb: fluteFLBench{lambda1: p.Lambda1, lambda2: p.Lambda2, lr: p.NC2LR, workers: p.Workers}}
}

func (f *flute) Init(st *train.State, clients int) {
	st.Personal = make([]tensor.List, clients)
	if f.flbench {
		return // nil: never trained (FL-bench's empty personal parameters)
	}
	for c := range st.Personal {
		st.Personal[c] = st.Global
	}
}

// normalizedGrad returns the gradient with respect to x of ‖x/‖x‖ − t‖² (t fixed; x any
// vector, ‖·‖ the Euclidean norm), and the value.
func normalizedGrad(x, t []float64) ([]float64, float64) {
	n := 0.0
	for _, v := range x {
		n += v * v
	}
	n = math.Sqrt(n)
	g := make([]float64, len(x))
	if n == 0 {
		return g, 0
	}
	val, dot := 0.0, 0.0
	for i, v := range x {
		d := 2 * (v/n - t[i])
		g[i] = d
		val += (v/n - t[i]) * (v/n - t[i])
		dot += d * v / n
	}
	for i, v := range x {
		g[i] = (g[i] - dot*v/n) / n
	}
	return g, val
}

// nc2 returns the NC2 term of the head weight w ([d, C] row-major) over the classes
// present, and adds lambda times its gradient to grad.
func nc2(w []float64, d, classes int, present []int, lambda float64, grad []float64) float64 {
	k := len(present)
	if k < 2 {
		return 0
	}
	gram := make([]float64, k*k)
	for a, ca := range present {
		for b, cb := range present {
			s := 0.0
			for r := 0; r < d; r++ {
				s += w[r*classes+ca] * w[r*classes+cb]
			}
			gram[a*k+b] = s
		}
	}
	target := make([]float64, k*k)
	norm := math.Sqrt(float64(k - 1)) // ‖I − 11ᵀ/k‖_F
	for a := 0; a < k; a++ {
		for b := 0; b < k; b++ {
			v := -1 / float64(k)
			if a == b {
				v += 1
			}
			target[a*k+b] = v / norm
		}
	}
	gg, val := normalizedGrad(gram, target)
	// ∂/∂w_ca = Σ_b (G'_ab + G'_ba)·w_cb.
	for a, ca := range present {
		for b, cb := range present {
			s := lambda * (gg[a*k+b] + gg[b*k+a])
			for r := 0; r < d; r++ {
				grad[r*classes+ca] += s * w[r*classes+cb]
			}
		}
	}
	return val
}

// nc3 returns the NC3 term ‖W/‖W‖ − H/‖H‖‖² over the classes present (H given as class
// means [classes][d]) and adds lambda times its gradient with respect to w to grad.
func nc3(w []float64, d, classes int, present []int, means [][]float64, lambda float64, grad []float64) float64 {
	if len(present) == 0 {
		return 0
	}
	x := make([]float64, 0, len(present)*d)
	t := make([]float64, 0, len(present)*d)
	hn := 0.0
	for _, c := range present {
		for r := 0; r < d; r++ {
			x = append(x, w[r*classes+c])
			t = append(t, means[c][r])
			hn += means[c][r] * means[c][r]
		}
	}
	hn = math.Sqrt(hn)
	if hn == 0 {
		return 0
	}
	for i := range t {
		t[i] /= hn
	}
	g, val := normalizedGrad(x, t)
	for j, c := range present {
		for r := 0; r < d; r++ {
			grad[r*classes+c] += lambda * g[j*d+r]
		}
	}
	return val
}

func (f *flute) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	if f.flbench {
		return f.fb.train(l, st, c)
	}
	head := headMask(st.Global)
	theta := merge(st.Global, st.Personal[c], head)
	d, classes := l.Model().FeatureDim(), l.Model().Spec().NumClasses
	feats, err := l.Model().Features(theta, l.TrainX(), train.EvalBatch)
	if err != nil {
		return train.Upload{}, err
	}
	s := featureMoments(feats, l.TrainY(), d, classes, false)
	var present []int
	for k, n := range s.counts {
		if n > 0 {
			present = append(present, k)
		}
	}
	wi := theta.Find("classifier.weight")
	// 1. The head, with the NC2 and NC3 regularizers.
	opt := newGoSGD(l.Optimizer())
	err = l.Batches(f.headEpochs, "fedrep-head", func(e int, x []float32, y []int32) error {
		g, err := l.Model().Gradient(theta, x, y)
		if err != nil {
			return err
		}
		if f.nc2 != 0 || f.nc3 != 0 {
			w := make([]float64, len(theta[wi].Data))
			for i, v := range theta[wi].Data {
				w[i] = float64(v)
			}
			reg := make([]float64, len(w))
			nc2(w, d, classes, present, f.nc2, reg)
			nc3(w, d, classes, present, s.means, f.nc3, reg)
			gw := g[g.Find("classifier.weight")].Data
			for i, v := range reg {
				gw[i] += float32(v)
			}
		}
		opt.step("", theta, g, head, 1)
		setStats(theta, l.Model().BatchStats())
		return headFinite(theta[wi].Data, e)
	})
	if err != nil {
		return train.Upload{}, err
	}
	// 2. The body, aligned to the scaled head columns.
	body := invert(head)
	if ones, _ := count(body); ones > 0 {
		cent := f.targets(theta[wi].Data, d, classes, present, s.means)
		if theta, err = trainAligned(l, theta, body, cent, float32(f.nc3), l.Epochs()); err != nil {
			return train.Upload{}, err
		}
	}
	return train.Upload{Params: theta}, nil
}

// targets returns the body's alignment targets t_c = ‖H‖·w_c/‖W‖ (over the classes
// present) in the centroid format trainAligned reads.
func (f *flute) targets(w []float32, d, classes int, present []int, means [][]float64) tensor.List {
	cent, counts := tensor.New("pac.centroids", classes, d), tensor.New("pac.counts", classes)
	wn, hn := 0.0, 0.0
	for _, c := range present {
		for r := 0; r < d; r++ {
			wn += float64(w[r*classes+c]) * float64(w[r*classes+c])
			hn += means[c][r] * means[c][r]
		}
	}
	if wn == 0 {
		return tensor.List{cent, counts}
	}
	scale := math.Sqrt(hn / wn)
	for _, c := range present {
		counts.Data[c] = 1
		for r := 0; r < d; r++ {
			cent.Data[c*d+r] = float32(scale * float64(w[r*classes+c]))
		}
	}
	return tensor.List{cent, counts}
}

// ConcurrentClients implements train.ConcurrentClients for impl flbench, whose Train reads
// the global model and client c's personal one and writes no state; impl paper trains one
// client at a time.
func (f *flute) ConcurrentClients() bool { return f.flbench }

func (f *flute) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	if f.flbench {
		return f.fb.finish(st, uploads, sizes)
	}
	for c, u := range uploads {
		st.Personal[c] = u.Params
	}
	return fedAvg{}.Finish(st, uploads, sizes)
}

func (f *flute) EvalModel(st *train.State, c int) tensor.List {
	if st.Personal[c] == nil {
		return st.Global // flbench, never trained: the averaged head
	}
	return merge(st.Global, st.Personal[c], headMask(st.Global))
}

// Comm: only the body travels, each way.
func (f *flute) Comm(st *train.State, c int, u train.Upload) (int64, int64) {
	if f.flbench {
		// FL-bench sends every parameter each way (its FedPer client keeps the head
		// personal but uploads it), and the client's label indicator up.
		return train.ModelBytes(st.Global), train.ModelBytes(u.Params) + train.ModelBytes(u.Stats)
	}
	var body int64
	for _, t := range u.Params {
		if !isClassifier(t.Name) {
			body += int64(len(t.Data))
		}
	}
	return 4 * body, 4 * body
}

// headFinite fails when head training produced a NaN or an infinity in epoch e (0-based).
func headFinite(w []float32, e int) error {
	for _, v := range w {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("head training diverged (epoch %d): lower the learning rate", e+1)
		}
	}
	return nil
}
