package methods

import (
	"fmt"
	"math"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FedDPAParams are feddpa's parameters.
type FedDPAParams struct {
	Q       float64 `param:"q" default:"0.4" check:"unit" doc:"per-tensor quantile of the Fisher scores (0.4 in FedOBP's runs)"`
	Impl    string  `param:"impl" choices:"paper|flbench" doc:"paper: the Fisher at the client's own last model, clients trained independently; flbench: FL-bench's FedDPA as FedOBP's tables ran it (src/client/feddpa.py at b55d0fa): the Fisher at the model the serving client object last trained (its previous client's) with BatchNorm in evaluation mode, per-tensor min-max normalized (a constant tensor is zeroed), BatchNorm statistics personal"`
	Workers int     `param:"workers" default:"2" check:"gt0" doc:"flbench: ray workers, each one client object with its own last-trained model (FL-bench's parallel.num_workers, 2 in FedOBP's logged FedDPA runs; 1: serial mode, one object for every client)"`
}

func init() {
	// BNRevision 1: impl flbench takes the Fisher with BatchNorm in evaluation mode.
	// impl=flbench 1: evaluations score the models of FL-bench's test pass (EndRound).
	// Revision 1: the Fisher is Local.BatchedFisher's (sums in another order).
	train.Register(manifest.MethodDef{Name: "feddpa", Display: "FedDPA", Cost: fisherCost, Extension: flbenchEvaluates, Personal: true, Revision: 1, BNRevision: 1,
		OptionRevisions: map[string]int{"impl=flbench": 1},
		Doc:             "FedDPA, FedOBP's Fisher-based baseline: entries whose empirical Fisher information exceeds their tensor's q-quantile keep the client's value."},
		newFedDPAImpl)
}

// newFedDPAImpl returns FedDPA as fedOBP with the Fisher score (newFedDPA, impl paper) or
// as FL-bench runs it (impl flbench).
func newFedDPAImpl(p *FedDPAParams) train.Method {
	f := newFedDPA(p).(*fedOBP)
	if p.Impl == "flbench" {
		return &fedDPAFL{fedOBP: *f, rayAssign: rayAssign{workers: p.Workers}}
	}
	return f
}

// fedDPAFL is FedDPA as FL-bench runs it in FedOBP's tables (uglyghost/FedOBP at b55d0fa,
// src/client/feddpa.py). Its set_parameters (:30-85) computes the Fisher with
// compute_fisher_diag (:55, :116-165) on self.model before loading anything into it: in
// FL-bench a client object serves client after client (one object in serial mode,
// src/utils/trainer.py:18-19, :40-45; one per ray worker in parallel mode, :20-27, the
// logged runs' mode with 2 workers), so that model is the one the object's previous client
// finished training with (the initial model for its very first client). The Fisher is the sum over the client's
// training samples of the squared gradient of log softmax at the label (:137-148), taken
// after self.model.eval() (:126; fit() sets train mode again, src/client/fedavg.py:206), so
// BatchNorm normalizes with its running statistics and each sample's gradient is its own
// (Local.WithFrozenBN: the gradient of one sample at a time in that mode), divided
// by min(#batches, 10) (:154) and min-max normalized per tensor (:158-163); a tensor whose
// Fisher is constant normalizes to NaN, so neither of the two masks (:63-64) selects any
// entry and the tensor starts at zero. Per tensor, entries above the tensor's
// torch.quantile(·, 0.4) (:61-62) take the client's model after its last training
// (postrain_state_dict, the initial model before it trained, :25-28, :105), the others the
// global model (:80-81); BatchNorm buffers are not parameters, so they stay the client's own
// (:53, :83-85). The merged model trains as FedAvg's client does and the server averages
// everything (src/server/feddpa.py uses FedAvgServer's aggregation).
//
// The client object also keeps postrain_state_dict, each client's model after the last
// training it served (:25-28, :105), so with two workers a client's "own" values are those
// of the last time the serving worker trained it (the initial model if it never did).
//
// fedpipe keeps each worker's last trained model ("held") and each worker's copy of every
// client's last model ("own") in the state, and spreads a round's clients over the workers
// as rayQueue models FL-bench's dispatch (which worker served which client depended on job
// timing there; here on training-set sizes); each worker's clients are a chain
// (train.ClientChains), so the workers train side by side.
//
// Testing (src/client/fedavg.py:284-316, every evaluation round after the round's
// aggregation) goes through the same set_parameters: the clients 0, 1, ... go to whichever
// worker is idle (src/utils/trainer.py:144-168; rayQueue, by training-set size), which
// takes the Fisher at its current model on the tested client's training data, merges its
// own copy of that client's model into the global one by it, evaluates that model
// ("before"), fine-tunes a copy ("after") and keeps the merged model as its current one
// (:310-313), the Fisher point of its next client, tested or trained. EndRound replays that
// pass; the client's evaluation model is its result.
type fedDPAFL struct {
	fedOBP
	rayAssign
}

// fedDPAFLState holds the run's initial model (Init), the model each worker's client
// object last trained or tested (Held[w]; nil before its first client), each worker's copy
// of each client's last trained model (Own[w·clients + c]; nil before worker w trained
// client c; the same lists as the uploads, not copies) and, per client, the tensors its
// last test pass zeroed (Zeroed[c]: one single-value tensor by each such tensor's name; nil
// when none, or once the client trained since).
//
// st.Personal[c] and st.Masks[c] are the model and mask client c is evaluated with: after a
// test pass, the testing worker's copy of its model (the same list) and the mask of the
// Fisher at that worker's model; after c trains, its trained model and training mask.
type fedDPAFLState struct {
	Init   tensor.List
	Held   []tensor.List
	Own    []tensor.List
	Zeroed []tensor.List
}

// Slots stores them in the slots "init", "held", "own" and "zeroed".
func (s *fedDPAFLState) Slots() []train.Slot {
	return []train.Slot{train.ListSlot("init", &s.Init), train.ListsSlot("held", s.Held), train.ListsSlot("own", s.Own),
		train.ListsSlot("zeroed", s.Zeroed)}
}

func (f *fedDPAFL) Init(st *train.State, clients int) {
	st.Personal = make([]tensor.List, clients)
	st.Masks = make([]tensor.List, clients)
	workers := max(1, f.workers)
	st.Method = &fedDPAFLState{Init: st.Global.Clone(), Held: make([]tensor.List, workers),
		Own: make([]tensor.List, workers*clients), Zeroed: make([]tensor.List, clients)}
}

// dpaMask returns FL-bench's FedDPA selection for a Fisher diagonal: per tensor, 1 where the
// min-max normalized Fisher exceeds its q-quantile; BatchNorm running statistics are 1 (the
// client's own); zero[t] reports a tensor whose Fisher is constant (FL-bench's NaN case:
// the tensor becomes zero).
func dpaMask(fisher tensor.List, q float64) (mask tensor.List, zero []bool) {
	mask = train.ZeroMask(fisher)
	zero = make([]bool, len(fisher))
	for ti, t := range fisher {
		m := mask[ti].Data
		if model.IsRunningStat(t.Name) {
			for i := range m {
				m[i] = 1
			}
			continue
		}
		lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
		for _, v := range t.Data {
			lo, hi = min(lo, v), max(hi, v)
		}
		if !(hi > lo) {
			zero[ti] = true
			continue
		}
		norm := make([]float32, len(t.Data))
		for i, v := range t.Data {
			norm[i] = (v - lo) / (hi - lo)
		}
		tau := Quantile(append([]float32(nil), norm...), q)
		for i, v := range norm {
			if v > tau {
				m[i] = 1
			}
		}
	}
	return mask, zero
}

// serve is FL-bench's set_parameters on worker w for client c (l is its Local): the mask
// of the Fisher (in evaluation mode) at the worker's current model, the worker's copy of
// the client's model (own; the initial model if the worker never trained it) merged into
// the global one by that mask with the constant-Fisher tensors zeroed (start), and those
// tensors (zeroed, by index in st.Global; nil when none).
func (f *fedDPAFL) serve(l *train.Local, st *train.State, w, c int) (start, mask, own tensor.List, zeroed []int, err error) {
	s := st.Method.(*fedDPAFLState)
	at, own := s.Held[w], s.Own[w*len(st.Personal)+c]
	if at == nil {
		at = s.Init
	}
	if own == nil {
		own = s.Init
	}
	fi, err := l.WithFrozenBN().BatchedFisher(at)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("fisher: %w", err)
	}
	mask, zero := dpaMask(fi, f.q)
	start = merge(st.Global, own, mask)
	for t, z := range zero {
		if z {
			i := start.Find(fi[t].Name)
			clear(start[i].Data)
			zeroed = append(zeroed, i)
		}
	}
	return start, mask, own, zeroed, nil
}

func (f *fedDPAFL) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	s := st.Method.(*fedDPAFLState)
	w := f.worker(l)
	start, mask, _, _, err := f.serve(l, st, w, c)
	if err != nil {
		return train.Upload{}, err
	}
	trained, err := l.Fit(start, train.Fit{})
	if err != nil {
		return train.Upload{}, err
	}
	s.Held[w], s.Own[w*len(st.Personal)+c] = trained.Clone(), trained
	return train.Upload{Params: trained, NextMask: mask}, nil
}

// Finish is fedOBP's (size-weighted average; each uploader's model and mask become its
// evaluation ones), and an uploader's zeroed tensors are no longer those of a test pass.
func (f *fedDPAFL) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	if err := f.fedOBP.Finish(st, uploads, sizes); err != nil {
		return err
	}
	for c := range uploads {
		st.Method.(*fedDPAFLState).Zeroed[c] = nil
	}
	return nil
}

// EndRound implements train.RoundEnder: before an evaluation, FL-bench's test pass over
// every client (see fedDPAFL): each client's model and mask become those its testing
// worker merges, and that worker's current model becomes the merged model.
func (f *fedDPAFL) EndRound(st *train.State, _ int, local func(c int) *train.Local) error {
	if len(st.Personal) == 0 || !local(0).Evaluates() {
		return nil
	}
	s := st.Method.(*fedDPAFLState)
	q := newRayQueue(f.workers)
	for c := range st.Personal {
		l := local(c)
		w := q.dispatch(l.TrainSize())
		start, mask, own, zeroed, err := f.serve(l, st, w, c)
		if err != nil {
			return fmt.Errorf("testing client %d: %w", c, err)
		}
		st.Personal[c], st.Masks[c], s.Held[w] = own, mask, start
		s.Zeroed[c] = nil
		for _, i := range zeroed {
			s.Zeroed[c] = append(s.Zeroed[c], tensor.Tensor{Name: st.Global[i].Name, Shape: []int{1}, Data: []float32{1}})
		}
	}
	return nil
}

// EvalModel merges client c's evaluation model into the global one with its evaluation
// mask (see fedDPAFLState), zeroing the tensors its test pass zeroed.
func (f *fedDPAFL) EvalModel(st *train.State, c int) tensor.List {
	if st.Personal[c] == nil {
		return st.Global
	}
	m := merge(st.Global, st.Personal[c], st.Masks[c])
	for _, z := range st.Method.(*fedDPAFLState).Zeroed[c] {
		clear(m[m.Find(z.Name)].Data)
	}
	return m
}

// ConcurrentClients is false: a client's Fisher is taken at its worker's previous client's
// model (see Chains).
func (*fedDPAFL) ConcurrentClients() bool { return false }

// fisherCost is FedDPA's implied cost: FedAvg's local epochs plus the empirical Fisher, one
// forward and one backward pass of every training sample on its own, once a round.
func fisherCost(c manifest.CostOf) manifest.ImpliedCost {
	return manifest.ImpliedCost{Multiple: 1 + 1/float64(c.Epochs),
		Why: fmt.Sprintf("FedAvg's %d epochs and the Fisher: a forward and backward pass of every training sample (one epoch's passes) before training", c.Epochs)}
}
