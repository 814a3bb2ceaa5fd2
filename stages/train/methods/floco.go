package methods

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/rng"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FLOCOParams are floco's parameters.
type FLOCOParams struct {
	Endpoints int     `param:"endpoints" default:"3" check:"gt0" doc:"M, the simplex's endpoints (our default; 1 is FedAvg)"`
	Tau       int     `param:"tau" default:"50" check:"gt0" doc:"round from which clients get subregions (our default)"`
	Rho       float64 `param:"rho" default:"0.1" check:"gt0" doc:"radius of a client's subregion around its point"`
	Impl      string  `param:"impl" choices:"paper|flbench" doc:"paper: our form of the paper (see floco.go); flbench: FL-bench's FLOCO as FedOBP's tables ran it (floco_flbench.go; their runs: endpoints 10, tau 10, rho 0.1)"`
}

func init() {
	train.Register(manifest.MethodDef{Name: "floco", Display: "FLOCO", Cost: manifest.PlainTraining, Extension: manifest.ExtensionIs(manifest.ExtendAlways), Personal: true,
		Doc: "FLOCO (Grinwald et al., NeurIPS 2024): the classifier is a solution simplex of M endpoints trained by sampling a point per batch; from round tau each client samples within a ball around its own point, placed by a projection of its update signature; shared body; evaluated at the client's point."},
		newFLOCO)
}

// floco is FLOCO (Grinwald et al., NeurIPS 2024, "Federated Learning over Connected
// Modes"): the classifier layer is a solution simplex — M endpoints e_1..e_M, the head at a
// point α of the probability simplex being Σ_m α_m·e_m — and the body is shared as in
// FedAvg. Clients train the simplex by sampling a point per mini-batch (stream
// "floco-alpha"): the gradient g of the loss at body + Σ α_m e_m moves the body by g and
// endpoint m by α_m·g (the run's optimizer, one momentum buffer per tensor and endpoint).
// Until round tau every client samples uniformly from the whole simplex. From round tau
// on, a client without a subregion gets one from the update its training made to the
// simplex (the gradient signature): the mean endpoint update Δ is mapped to M numbers z
// by a fixed Gaussian random projection (stream "floco-projection", normalized by ‖Δ‖),
// and its subregion center is the Euclidean projection of 1/M + z/M onto the simplex;
// afterwards it samples uniformly from the ball of radius rho around its center, within
// the simplex. The server averages the body and each endpoint by training-set size.
// Clients are evaluated at their subregion center (the simplex's center if unassigned).
//
// Simplifications, documented: the paper's signature projection is replaced by the random
// projection above; endpoints other than the first start from fresh PyTorch-default
// uniform draws (stream "floco-endpoints"; the first is the common initial classifier, so
// that M = 1 is FedAvg); defaults M = 3, tau = 50, rho = 0.1 are ours; FLOCO+'s local
// fine-tuning is not included (train.finetune_epochs applies to the evaluated point).
//
// With impl flbench the simplex, its initialization, the projection, the sampling and the
// time of the projection are FL-bench's (floco_flbench.go).
type floco struct {
	m, tau  int
	rho     float64
	flbench bool
	// mu guards the endpoints' first use, which makes them (concurrent clients of round
	// one may all ask).
	mu sync.Mutex
}

func newFLOCO(p *FLOCOParams) train.Method {
	return &floco{m: p.Endpoints, tau: p.Tau, rho: p.Rho, flbench: p.Impl == "flbench"}
}

// inSimplex reports whether the tensor called name is one of the simplex's: the classifier
// (paper), or only its weight (flbench).
func (f *floco) inSimplex(name string) bool {
	if f.flbench {
		return name == "classifier.weight"
	}
	return isClassifier(name)
}

func (f *floco) Init(st *train.State, clients int) {
	st.Personal = nil
	st.Method = &flocoState{Endpoints: make([]tensor.List, f.m), Center: make([]tensor.List, clients)}
}

// flocoState holds the simplex's endpoints (classifier tensors; nil until the first Train
// draws them) and each client's subregion center (a one-tensor list; nil before tau).
type flocoState struct{ Endpoints, Center []tensor.List }

// Slots stores them in the slots "floco_endpoints" and "floco_center".
func (s *flocoState) Slots() []train.Slot {
	return []train.Slot{train.ListsSlot("floco_endpoints", s.Endpoints), train.ListsSlot("floco_center", s.Center)}
}

// endpoints returns the simplex's endpoints, drawing them at first use.
func (f *floco) endpoints(st *train.State, seed int64) []tensor.List {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := st.Method.(*flocoState).Endpoints
	if e[0] != nil {
		return e
	}
	head := tensorsNamed(st.Global, f.inSimplex)
	if f.flbench {
		copy(e, xavierEndpoints(head, f.m, seed))
		return e
	}
	r := rng.New(seed, 0, rng.Global, "floco-endpoints")
	for m := range e {
		e[m] = head.Clone()
		if m == 0 {
			continue
		}
		fanIn := head[head.Find("classifier.weight")].Shape[0]
		bound := 1 / math.Sqrt(float64(fanIn))
		for _, t := range e[m] {
			for i := range t.Data {
				t.Data[i] = float32((2*r.Float64() - 1) * bound)
			}
		}
	}
	return e
}

// center returns client c's subregion center (uniform if unassigned).
func (f *floco) center(st *train.State, c int) []float64 {
	a := make([]float64, f.m)
	if ct := st.Method.(*flocoState).Center[c]; ct != nil {
		for i, v := range ct[0].Data {
			a[i] = float64(v)
		}
		return a
	}
	for i := range a {
		a[i] = 1 / float64(f.m)
	}
	return a
}

// point returns body (from params) with the simplex's tensors at Σ α_m e_m.
func point(params tensor.List, ends []tensor.List, alpha []float64) tensor.List {
	out := params.Clone()
	for _, t := range out {
		if ends[0].Find(t.Name) < 0 {
			continue
		}
		for i := range t.Data {
			s := 0.0
			for m, e := range ends {
				s += alpha[m] * float64(e[e.Find(t.Name)].Data[i])
			}
			t.Data[i] = float32(s)
		}
	}
	return out
}

// sample draws a point of the simplex: uniform over it (center nil), or uniform in the
// ball of radius rho around center within it (flbench: FL-bench's L1-ball draw).
func (f *floco) sample(r *rand.Rand, center []float64) []float64 {
	if center == nil {
		return rng.Dirichlet(r, 1, f.m)
	}
	if f.flbench {
		return sampleL1Ball(r, center, f.rho)
	}
	if f.m == 1 {
		return []float64{1}
	}
	for try := 0; try < 100; try++ {
		d := make([]float64, f.m)
		mean, norm := 0.0, 0.0
		for i := range d {
			d[i] = r.NormFloat64()
			mean += d[i] / float64(f.m)
		}
		for i := range d {
			d[i] -= mean
			norm += d[i] * d[i]
		}
		rad := f.rho * math.Pow(r.Float64(), 1/float64(f.m-1)) / math.Sqrt(norm)
		a := make([]float64, f.m)
		ok := true
		for i := range a {
			a[i] = center[i] + rad*d[i]
			ok = ok && a[i] >= 0
		}
		if ok {
			return a
		}
	}
	return append([]float64(nil), center...)
}

func (f *floco) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	ends := f.endpoints(st, l.Seed())
	var center []float64
	if st.Method.(*flocoState).Center[c] != nil {
		center = f.center(st, c)
	}
	full, local, err := f.trainSimplex(l, st, ends, center, "")
	if err != nil {
		return train.Upload{}, err
	}
	var stats tensor.List
	for m, e := range local {
		for _, t := range e {
			t.Name = fmt.Sprintf("floco.e%d.%s", m, t.Name)
			stats = append(stats, t)
		}
	}
	if !f.flbench && center == nil && l.Round() >= f.tau {
		stats = append(stats, f.signature(l.Seed(), ends, local))
	}
	return train.Upload{Params: full, Stats: stats}, nil
}

// trainSimplex trains the client's copy of the body and the endpoints from the global
// model for the run's local epochs, sampling a point per batch around center (nil: the
// whole simplex); it returns the full model (the head at the global model's value) and
// the trained endpoints. A non-empty stream prefixes the names of the random streams.
//
// The gradient is taken at pt, one copy of the global model whose body tensors are the
// ones trained (body holds the same tensors) and whose simplex tensors are rewritten each
// batch to Σ α_m e_m (simplexPoint.set, point's sums): no per-batch copy of the model.
func (f *floco) trainSimplex(l *train.Local, st *train.State, ends []tensor.List, center []float64, stream string) (tensor.List, []tensor.List, error) {
	local := make([]tensor.List, f.m)
	for m, e := range ends {
		local[m] = e.Clone()
	}
	pt := st.Global.Clone()
	body := tensorsNamed(pt, func(n string) bool { return !f.inSimplex(n) })
	head := newSimplexPoint(pt, local)
	alphaStream, shuffle := "floco-alpha", "shuffle"
	if stream != "" {
		alphaStream, shuffle = stream+"/alpha", stream+"/shuffle"
	}
	r := rng.New(l.Seed(), l.Round(), l.Client(), alphaStream)
	opt := newGoSGD(l.Optimizer())
	keys := make([]string, len(local))
	for m := range keys {
		keys[m] = fmt.Sprintf("e%d/", m)
	}
	// The body's tensors step leaves alone (the running statistics) are checked apart.
	stats := tensorsNamed(body, model.IsRunningStat)
	var g tensor.List // the gradient's buffers, reused batch after batch
	err := l.Batches(l.Epochs(), shuffle, func(e int, x []float32, y []int32) error {
		alpha := f.sample(r, center)
		head.set(alpha)
		var batchStats tensor.List
		err := l.WithModel(func(m *model.Model) (err error) {
			g, err = m.GradientInto(g, pt, x, y)
			batchStats = slices.Clone(m.BatchStats()) // the model reuses the list on its next call
			return err
		})
		if err != nil {
			return err
		}
		ok := opt.step("body/", body, g, nil, 1)
		setStats(body, batchStats)
		for m := range local {
			opt.step(keys[m], local[m], g, nil, float32(alpha[m]))
		}
		for _, t := range stats {
			ok = ok && finite(t.Data)
		}
		if !ok {
			return fmt.Errorf("training diverged (epoch %d): lower the learning rate", e+1)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, t := range pt {
		if f.inSimplex(t.Name) {
			copy(t.Data, st.Global[st.Global.Find(t.Name)].Data)
		}
	}
	return pt, local, nil
}

// simplexPoint writes the simplex's tensors of a model at a point of the simplex.
type simplexPoint struct {
	dst  [][]float32   // per simplex tensor, the model's data
	ends [][][]float32 // per simplex tensor, each endpoint's data
}

// newSimplexPoint matches the tensors of params that the endpoints hold (by name) with
// theirs; the endpoints' data is read at each set, so their training shows.
func newSimplexPoint(params tensor.List, ends []tensor.List) simplexPoint {
	var p simplexPoint
	for _, t := range params {
		if ends[0].Find(t.Name) < 0 {
			continue
		}
		es := make([][]float32, len(ends))
		for m, e := range ends {
			es[m] = e[e.Find(t.Name)].Data[:len(t.Data)]
		}
		p.dst, p.ends = append(p.dst, t.Data), append(p.ends, es)
	}
	return p
}

// set writes Σ α_m e_m into the simplex's tensors, each entry summed as point sums it.
func (p simplexPoint) set(alpha []float64) {
	for k, dst := range p.dst {
		es := p.ends[k]
		for i := range dst {
			s := 0.0
			for m, e := range es {
				s += alpha[m] * float64(e[i])
			}
			dst[i] = float32(s)
		}
	}
}

// signature maps the mean endpoint update to M numbers (see the type's comment).
func (f *floco) signature(seed int64, before, after []tensor.List) tensor.Tensor {
	var delta []float64
	for t := range before[0] {
		for i := range before[0][t].Data {
			s := 0.0
			for m := range before {
				s += float64(after[m][t].Data[i]-before[m][t].Data[i]) / float64(f.m)
			}
			delta = append(delta, s)
		}
	}
	norm := 0.0
	for _, v := range delta {
		norm += v * v
	}
	norm = math.Max(math.Sqrt(norm), 1e-12)
	r := rng.New(seed, 0, rng.Global, "floco-projection")
	z := make([]float64, f.m)
	for k := range z {
		for _, v := range delta {
			z[k] += r.NormFloat64() * v / norm
		}
	}
	for k := range z {
		z[k] = 1/float64(f.m) + z[k]/float64(f.m)
	}
	projectSimplex(z)
	t := tensor.New("floco.center", f.m)
	for k, v := range z {
		t.Data[k] = float32(v)
	}
	return t
}

// ConcurrentClients implements train.ConcurrentClients: Train reads the global model, the
// endpoints (made once, under f.mu) and client c's center, and writes no state.
func (f *floco) ConcurrentClients() bool { return true }

func (f *floco) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	ids, models, weights := bySize(uploads, sizes)
	avg, err := train.WeightedAverage(models, weights)
	if err != nil {
		return err
	}
	ends := st.Method.(*flocoState).Endpoints
	for m := range ends {
		prefix := fmt.Sprintf("floco.e%d.", m)
		es := make([]tensor.List, len(ids))
		for i, c := range ids {
			for _, t := range uploads[c].Stats {
				if len(t.Name) > len(prefix) && t.Name[:len(prefix)] == prefix {
					t.Name = t.Name[len(prefix):]
					es[i] = append(es[i], t)
				}
			}
		}
		if ends[m], err = train.WeightedAverage(es, weights); err != nil {
			return err
		}
	}
	uniform := make([]float64, f.m)
	for i := range uniform {
		uniform[i] = 1 / float64(f.m)
	}
	st.Global = point(avg, ends, uniform)
	for _, c := range ids {
		s := uploads[c].Stats
		if k := s.Find("floco.center"); k >= 0 {
			st.Method.(*flocoState).Center[c] = tensor.List{s[k]}
		}
	}
	return nil
}

func (f *floco) EvalModel(st *train.State, c int) tensor.List {
	if st.Method.(*flocoState).Endpoints[0] == nil {
		return st.Global
	}
	return point(st.Global, st.Method.(*flocoState).Endpoints, f.center(st, c))
}

// Comm: the body and the M endpoints each way, and the subregion signature (M values) up
// once.
func (f *floco) Comm(st *train.State, c int, u train.Upload) (int64, int64) {
	var head int64
	for _, t := range st.Global {
		if f.inSimplex(t.Name) {
			head += int64(len(t.Data))
		}
	}
	down := int64(st.Global.NumElements()) - head + int64(f.m)*head
	up := down
	if u.Stats.Find("floco.center") >= 0 {
		up += int64(f.m)
	}
	return 4 * down, 4 * up
}
