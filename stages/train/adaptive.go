package train

import (
	"fmt"
	"math"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
)

// Evaluator scores client c's final model(s) on samples (x, y). The evaluate and shift
// stages use one, so a method that infers with more than one model (DM-PFL+) is scored
// the same way on unshifted and shifted data.
type Evaluator interface {
	Evaluate(c int, x []float32, y []int32) (Metric, error)
}

// globalEvaluated is implemented by methods whose global model is not st.Global as is
// (DM-PFL's θ_g = w_g ⊙ m_g); the train stage stores it as "model/global".
type globalEvaluated interface {
	EvalGlobal(st *State) tensor.List
}

// EvalGlobal returns the global model a method infers with beside the personal ones, and
// false for methods that have none of their own.
func EvalGlobal(r *manifest.Run, st *State) (tensor.List, bool, error) {
	m, err := NewMethod(r.Method, r.Params, r.Options)
	if err != nil {
		return nil, false, err
	}
	if g, ok := optional[globalEvaluated](m); ok {
		return g.EvalGlobal(st), true, nil
	}
	return nil, false, nil
}

// NeedsGlobal reports whether a run's evaluation needs the global model beside each
// client's (DM-PFL+'s adaptive inference).
func NeedsGlobal(r *manifest.Run) bool { return r.Method == "dmpfl_plus" }

// plain scores one model per client.
type plain struct {
	m      *model.Model
	models []tensor.List
}

func (p plain) Evaluate(c int, x []float32, y []int32) (Metric, error) {
	return Evaluate(p.m, p.models[c], x, y)
}

// FinalEvaluator returns the evaluator of a run's final models after fine-tuning when the
// run fine-tunes (see PrepareFinal; the shift stage's protocol); global is the run's
// global model (EvalGlobal), needed when NeedsGlobal(r).
func FinalEvaluator(m *model.Model, r *manifest.Run, ds *data.Dataset, a *partition.Assignment, models []tensor.List, global tensor.List) (Evaluator, error) {
	prepared, _, err := PrepareFinal(m, r, ds, a, models)
	if err != nil {
		return nil, err
	}
	return evaluatorOf(m, r, ds, a, prepared, global)
}

// evaluatorOf returns the evaluator of the given client models as they are.
func evaluatorOf(m *model.Model, r *manifest.Run, ds *data.Dataset, a *partition.Assignment, prepared []tensor.List, global tensor.List) (Evaluator, error) {
	if !NeedsGlobal(r) {
		return plain{m, prepared}, nil
	}
	if global == nil {
		return nil, fmt.Errorf("%s needs the global model, which the train stage did not store", r.Method)
	}
	return newAdaptive(m, prepared, global, func(c int) []float32 {
		idx := a.Train[c]
		if r.Options["base_entropy"] == "test" {
			idx = a.Test[c]
		}
		x, _ := ds.Gather(idx)
		return x
	})
}

// multiModel is implemented by methods whose evaluation may use more than one model per
// client; data(c, test) is client c's unshifted training (or test) inputs.
type multiModel interface {
	evaluator(m *model.Model, st *State, prepared []tensor.List, data func(c int, test bool) []float32) (Evaluator, error)
}

// newAdaptive measures the base entropies of every client's personal model and of the
// global model on base(c), the client's unshifted data.
func newAdaptive(m *model.Model, personal []tensor.List, global tensor.List, base func(c int) []float32) (*Adaptive, error) {
	ad := &Adaptive{m: m, personal: personal, global: global, baseC: make([]float64, len(personal)), baseG: make([]float64, len(personal))}
	for c := range personal {
		x := base(c)
		var err error
		if ad.baseC[c], err = ad.baseEntropy(personal[c], x); err != nil {
			return nil, err
		}
		if ad.baseG[c], err = ad.baseEntropy(global, x); err != nil {
			return nil, err
		}
	}
	return ad, nil
}

// Adaptive is DM-PFL+'s adaptive inference (Alg. 4): for each sample x, with p_c and p_g
// the softmax outputs of the personal model θ_c and the global model θ_g,
//
//	E_c = H(p_c), E_g = H(p_g), Sim = cos(p_c, p_g)
//	predict with θ_c if E_c − (1 − Sim)·BE(θ_c) < E_g − (1 − Sim)·BE(θ_g), else θ_g
//
// where H is the entropy in nats and BE a model's mean entropy on the client's unshifted
// data (its training data by default; base_entropy: test uses its own test split). The
// loss reported is the chosen model's cross-entropy on the sample.
type Adaptive struct {
	m            *model.Model
	personal     []tensor.List
	global       tensor.List
	baseC, baseG []float64
}

// softmax returns the probabilities of one logit row (computed in float64).
func softmax(logits []float32) []float64 {
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = math.Max(mx, float64(v))
	}
	p := make([]float64, len(logits))
	s := 0.0
	for i, v := range logits {
		p[i] = math.Exp(float64(v) - mx)
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

// Entropy is −Σ p·ln p.
func Entropy(p []float64) float64 {
	h := 0.0
	for _, v := range p {
		if v > 0 {
			h -= v * math.Log(v)
		}
	}
	return h
}

// Cosine is the cosine similarity of a and b (0 when either is zero).
func Cosine(a, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}

// PickPersonal is Alg. 4's rule on one sample's two output distributions.
func PickPersonal(pc, pg []float64, beC, beG float64) bool {
	sim := Cosine(pc, pg)
	return Entropy(pc)-(1-sim)*beC < Entropy(pg)-(1-sim)*beG
}

func (ad *Adaptive) baseEntropy(params tensor.List, x []float32) (float64, error) {
	k := ad.m.Spec().NumClasses
	logits, err := ad.m.Logits(params, x, EvalBatch)
	if err != nil {
		return 0, err
	}
	n := len(logits) / k
	if n == 0 {
		return 0, nil
	}
	s := 0.0
	for i := 0; i < n; i++ {
		s += Entropy(softmax(logits[i*k : (i+1)*k]))
	}
	return s / float64(n), nil
}

// Evaluate scores client c with the per-sample choice of model.
func (ad *Adaptive) Evaluate(c int, x []float32, y []int32) (Metric, error) {
	if len(y) == 0 {
		return Metric{}, nil
	}
	k := ad.m.Spec().NumClasses
	lc, err := ad.m.Logits(ad.personal[c], x, EvalBatch)
	if err != nil {
		return Metric{}, err
	}
	lg, err := ad.m.Logits(ad.global, x, EvalBatch)
	if err != nil {
		return Metric{}, err
	}
	loss, correct := 0.0, 0
	for i, label := range y {
		pc, pg := softmax(lc[i*k:(i+1)*k]), softmax(lg[i*k:(i+1)*k])
		p := pg
		if PickPersonal(pc, pg, ad.baseC[c], ad.baseG[c]) {
			p = pc
		}
		loss -= math.Log(max(p[label], math.SmallestNonzeroFloat64))
		best := 0
		for j := range p {
			if p[j] > p[best] {
				best = j
			}
		}
		if best == int(label) {
			correct++
		}
	}
	return Metric{Loss: loss / float64(len(y)), Accuracy: float64(correct) / float64(len(y)), Samples: len(y)}, nil
}
