package methods

import (
	"fmt"
	"math"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/rng"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FedALAParams are fedala's parameters.
type FedALAParams struct {
	Eta           float64 `param:"eta" default:"1.0" check:"ge0" doc:"learning rate of W (1.0 in the paper; 0 keeps W = 1, i.e. FedAvg's starting point)"`
	RandPercent   float64 `param:"rand_percent" default:"80" check:"gt0" doc:"s: percentage of local training data sampled to learn W (80 in the paper)"`
	LayerIdx      int     `param:"layer_idx" default:"1" check:"gt0" doc:"p: number of top layers (weight and bias) adapted element-wise; the layers below take the global model"`
	Threshold     float64 `param:"threshold" default:"0.1" check:"ge0" doc:"first adaptation: train W until the std of the last num_pre_loss batch losses is below this (the authors' code)"`
	NumPreLoss    int     `param:"num_pre_loss" default:"10" check:"gt0" doc:"window of batch losses for the convergence test (the authors' code)"`
	MaxInitEpochs int     `param:"max_init_epochs" default:"20" check:"gt0" doc:"cap on the passes of the first adaptation (our choice; the code has none)"`
	Impl          string  `param:"impl" choices:"paper|flbench" doc:"paper: each client keeps its own model and W, evaluated with its model after local training; flbench: FL-bench's client objects (one per ray worker) share the model, W and start phase across the clients they serve, and evaluation re-runs the adaptation on each client's training data (see alaFLBench)"`
	Workers       int     `param:"workers" default:"2" check:"gt0" doc:"flbench: ray workers, each one client object (FL-bench's parallel.num_workers, 2 in FedOBP's logged runs; 1: serial mode, one object for every client)"`
}

func init() {
	// Revision 1: impl flbench carries each client's momentum buffers across its trainings
	// (alaFLBench.Train). BNRevision 1: impl flbench learns W with BatchNorm in evaluation
	// mode (alaFLBench.serve).
	train.Register(manifest.MethodDef{Name: "fedala", Display: "FedALA", Cost: alaCost, Extension: flbenchEvaluates, Personal: true, Features: true, Revision: 1, BNRevision: 1,
		Doc: "FedALA (Zhang et al., AAAI 2023): before local training each client mixes the global model into its own element-wise on the top layers, with weights W in [0, 1] learned on a random sample of its data; the lower layers take the global model; size-weighted FedAvg on the server."},
		newFedALA)
}

// fedALA is FedALA (Zhang et al., AAAI 2023): adaptive local aggregation. Client i keeps
// its local model θ_i (its model after its last local training) and element-wise weights
// W_i ∈ [0, 1] over the tensors of the top layer_idx layers (weight and bias each; the
// classifier is the top layer). Before local training it builds
//
//	θ̂ = θ_g                                on the lower layers,
//	θ̂ = θ_i + (θ_g − θ_i) ⊙ W_i             on the top layers,
//
// computed as θ_g − (θ_g − θ_i) ⊙ (1 − W_i) so that W = 1 gives θ_g exactly. W_i (all ones at
// first) is learned on a random rand_percent % of the client's training data (stream
// "fedala-sample"), in mini-batches of the run's batch size: for each batch, with g the
// gradient of the cross-entropy at θ̂,
//
//	W_i ← clip(W_i − eta·g ⊙ (θ_g − θ_i), 0, 1),  then θ̂ is rebuilt.
//
// At a client's first adaptation W is trained until the standard deviation of the last
// num_pre_loss batch losses falls below threshold (at most max_init_epochs passes); later it
// gets one pass. A client that never trained holds no model of its own and starts from θ_g
// (its first adaptation comes at its second participation); while θ_i equals θ_g there is
// nothing to adapt and W is left alone, as in the authors' code. Then θ̂ trains for the
// run's local epochs, is uploaded, and becomes θ_i; the server runs size-weighted FedAvg.
//
// Clients are evaluated with θ_i, their model after their last local training (fedpipe's
// choice: evaluating the adaptively aggregated model would need a W update, with data,
// at evaluation time). max_init_epochs is fedpipe's cap (the code loops until
// convergence). With eta = 0, W stays 1, θ̂ = θ_g, and the global model follows FedAvg bit
// for bit.
type fedALA struct {
	eta, randPercent, threshold float64
	layers, numPreLoss, maxInit int
}

func newFedALA(p *FedALAParams) train.Method {
	f := &fedALA{eta: p.Eta, randPercent: p.RandPercent, threshold: p.Threshold,
		layers: p.LayerIdx, numPreLoss: p.NumPreLoss, maxInit: p.MaxInitEpochs}
	if p.Impl == "flbench" {
		return &alaFLBench{fedALA: f, rayAssign: rayAssign{workers: p.Workers}}
	}
	return f
}

// ConcurrentClients implements train.ConcurrentClients: client c's Train reads the global
// model and its own model and W, and writes only its own W.
func (f *fedALA) ConcurrentClients() bool { return true }

func (f *fedALA) Init(st *train.State, clients int) {
	st.Personal = make([]tensor.List, clients)
	st.Method = &fedALAState{Weights: make([]tensor.List, clients)}
	for c := range st.Personal {
		st.Personal[c] = st.Global
	}
}

// top reports, per tensor of params (canonical order: by layer, weight then bias), whether
// it lies in the top layers.
func (f *fedALA) top(params tensor.List) []bool {
	out := make([]bool, len(params))
	for i := range params {
		out[i] = i >= len(params)-2*f.layers
	}
	return out
}

// combine returns θ̂ for the weights w (tensors of the top layers, by name).
func (f *fedALA) combine(global, local, w tensor.List) tensor.List {
	out := global.Clone()
	top := f.top(global)
	for t := range out {
		if !top[t] {
			continue
		}
		wt := w[w.Find(out[t].Name)].Data
		lt := local[local.Find(out[t].Name)].Data
		for i, g := range out[t].Data {
			out[t].Data[i] = g - (g-lt[i])*(1-wt[i])
		}
	}
	return out
}

func (f *fedALA) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	global, local := st.Global, st.Personal[c]
	w := st.Method.(*fedALAState).Weights[c]
	theta := global
	if w == nil {
		// A client that never trained holds no model of its own: it starts from θ_g, and
		// its W starts at one, with no adaptation yet.
		for t, isTop := range f.top(global) {
			if isTop {
				ones := tensor.New(global[t].Name, global[t].Shape...)
				for i := range ones.Data {
					ones.Data[i] = 1
				}
				w = append(w, ones)
			}
		}
		w = append(w, tensor.Tensor{Name: alaAdaptations, Shape: []int{1}, Data: []float32{0}})
	} else {
		w = w.Clone()
		theta = f.combine(global, local, w)
		n := &w[w.Find(alaAdaptations)].Data[0]
		if f.eta > 0 && !sameValues(global, local) {
			var err error
			if theta, err = f.adapt(l, global, local, w, *n == 0); err != nil {
				return train.Upload{}, err
			}
			*n++
		}
	}
	trained, err := l.Fit(theta, train.Fit{})
	if err != nil {
		return train.Upload{}, err
	}
	st.Method.(*fedALAState).Weights[c] = w
	return train.Upload{Params: trained}, nil
}

// fedALAState holds each client's element-wise weights W of the top layers, with the count
// of its adaptations (alaAdaptations); nil for a client that never trained. Under impl
// flbench it holds instead each worker's model, W (alaW) and start-phase flag (alaStarted),
// and each client's momentum buffers after its last training (Moms; nil before it trains).
type fedALAState struct{ Weights, Workers, Moms []tensor.List }

// Slots stores W in the slot "ala_weights", the workers in "ala_workers" and the momentum
// buffers in "ala_momentum".
func (s *fedALAState) Slots() []train.Slot {
	return []train.Slot{train.ListsSlot("ala_weights", s.Weights), train.ListsSlot("ala_workers", s.Workers),
		train.ListsSlot("ala_momentum", s.Moms)}
}

// alaAdaptations names the count of a client's adaptations, kept beside its W.
const alaAdaptations = "ala.adaptations"

// adapt learns w in place and returns the final θ̂.
func (f *fedALA) adapt(l *train.Local, global, local, w tensor.List, first bool) (tensor.List, error) {
	n := len(l.TrainY())
	size := len(l.TrainX()) / n
	m := max(1, int(float64(n)*f.randPercent/100))
	idx := rng.New(l.Seed(), l.Round(), l.Client(), "fedala-sample").Perm(n)[:m]
	theta := f.combine(global, local, w)
	var losses []float64
	epochs := 1
	if first {
		epochs = max(1, f.maxInit)
	}
	for e := 0; e < epochs; e++ {
		for start := 0; start < m; start += l.BatchSize() {
			bx, by := gatherBatch(l, idx[start:min(start+l.BatchSize(), m)], size)
			g, loss, err := crossEntropyGradient(l, theta, bx, by)
			if err != nil {
				return nil, err
			}
			if err := checkLoss(loss, e); err != nil {
				return nil, err
			}
			losses = append(losses, float64(loss))
			for _, wt := range w {
				if wt.Name == alaAdaptations {
					continue
				}
				gt := g[g.Find(wt.Name)].Data
				gl := global[global.Find(wt.Name)].Data
				lt := local[local.Find(wt.Name)].Data
				for i := range wt.Data {
					v := wt.Data[i] - float32(f.eta)*gt[i]*(gl[i]-lt[i])
					wt.Data[i] = min(max(v, 0), 1)
				}
			}
			theta = f.combine(global, local, w)
		}
		if !first || (len(losses) > f.numPreLoss && stddev(losses[len(losses)-f.numPreLoss:]) < f.threshold) {
			break
		}
	}
	return theta, nil
}

// crossEntropyGradient returns the gradient and mean loss of the cross-entropy of batch
// (bx, by) at params, computed on l's model in its turn (train.Local.WithModel), so that
// clients may train side by side.
func crossEntropyGradient(l *train.Local, params tensor.List, bx []float32, by []int32) (g tensor.List, loss float32, err error) {
	err = l.WithModel(func(m *model.Model) (err error) {
		d := m.FeatureDim()
		g, loss, _, err = m.FeatureGradient(params, bx, by, make([]float32, len(by)*d), make([]float32, len(by)), 0)
		return err
	})
	return g, loss, err
}

// stddev is the population standard deviation.
func stddev(v []float64) float64 {
	mean := 0.0
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	s := 0.0
	for _, x := range v {
		s += (x - mean) * (x - mean)
	}
	return math.Sqrt(s / float64(len(v)))
}

// sameValues reports whether two models hold the same values.
func sameValues(a, b tensor.List) bool {
	for t := range a {
		bt := b[b.Find(a[t].Name)].Data
		for i, v := range a[t].Data {
			if bt[i] != v {
				return false
			}
		}
	}
	return true
}

func (f *fedALA) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	for c, u := range uploads {
		st.Personal[c] = u.Params
	}
	return fedAvg{}.Finish(st, uploads, sizes)
}

func (f *fedALA) EvalModel(st *train.State, c int) tensor.List { return st.Personal[c] }

// gatherBatch copies the training samples idx of l's client (size values each) into one
// batch.
func gatherBatch(l *train.Local, idx []int, size int) ([]float32, []int32) {
	bx := make([]float32, 0, len(idx)*size)
	by := make([]int32, 0, len(idx))
	for _, i := range idx {
		bx = append(bx, l.TrainX()[i*size:(i+1)*size]...)
		by = append(by, l.TrainY()[i])
	}
	return bx, by
}

// alaCost is FedALA's implied cost after a client's first adaptation: FedAvg's local epochs
// plus one ALA pass, a forward and backward pass over rand_percent (default 80) % of the
// training samples. A client's first adaptation iterates to convergence (at most
// max_init_epochs passes), once a run.
func alaCost(c manifest.CostOf) manifest.ImpliedCost {
	return manifest.ImpliedCost{Multiple: 1 + 0.8/float64(c.Epochs),
		Why: fmt.Sprintf("FedAvg's %d epochs and one ALA pass over 80%% of the training samples (a client's first adaptation: until converged, once a run)", c.Epochs)}
}
