package methods

import (
	"math"
	"sort"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// LotteryFLParams are lotteryfl's parameters.
type LotteryFLParams struct {
	PruneRate      float64 `param:"prune_rate" default:"0.2" check:"unit" doc:"fraction of each weight tensor's remaining weights pruned per pruning step (our default)"`
	TargetSparsity float64 `param:"target_sparsity" default:"0.5" check:"unit,lt1" doc:"pruned fraction per weight tensor at which pruning stops (0: never prune: FedAvg with personal evaluation)"`
	AccThreshold   float64 `param:"acc_threshold" default:"0.5" check:"ge0" doc:"a client prunes only when its subnetwork's accuracy on its training data is at least this"`
	Rewind         string  `param:"rewind" choices:"init|none" doc:"after pruning, reset the surviving weights to the initial model (the lottery-ticket reset of LotteryFL's Alg. 1) or keep the downloaded values"`
}

func init() {
	train.Register(manifest.MethodDef{Name: "lotteryfl", Display: "LotteryFL", Cost: manifest.PlainTraining, Extension: manifest.ExtensionIs(manifest.ExtendAlways), Personal: true,
		Doc: "LotteryFL (Li et al. 2020): each client magnitude-prunes its own subnetwork while its local accuracy clears a threshold, rewinding the survivors to the initial model; the server averages each entry over the clients whose masks keep it; clients are evaluated with their sparse models."},
		newLotteryFL)
}

// lotteryFL is LotteryFL (Li et al. 2020, "LotteryFL: Personalized and
// Communication-Efficient Federated Learning with Lottery Ticket Hypothesis on Non-IID
// Datasets"). Each client k holds a keep-mask m_k (1 = the weight is in its subnetwork;
// all ones at first). In a round, client k:
//
//  1. takes the global model restricted to its subnetwork, θ = θ_g ⊙ m_k;
//  2. measures θ's accuracy on its local data; if it is at least acc_threshold and the
//     subnetwork is still denser than target_sparsity allows, prunes: in every weight
//     tensor, the prune_rate fraction of its remaining weights with the smallest |θ| leave
//     the mask (never past target_sparsity in that tensor), and the surviving weights are
//     rewound to the initial model's values (the lottery-ticket reset; rewind: none keeps
//     the downloaded values instead);
//  3. trains θ for the run's local epochs with the pruned entries fixed at 0, and uploads
//     θ with its mask.
//
// The server averages each entry over the uploads whose mask keeps it, weighted by
// training-set size; an entry no upload keeps keeps its previous global value. Each client
// is evaluated with its own sparse model — the one it trained last (a client that never
// trained: the global model).
//
// Choices the paper leaves open, all named parameters: the "validation" accuracy that gates
// pruning is measured on the client's training data (fedpipe keeps the test split for
// evaluation only); pruning is per tensor over weight tensors only (biases are never
// pruned), including the classifier; the defaults prune_rate 0.2, target_sparsity 0.5,
// acc_threshold 0.5 are fedpipe's. With target_sparsity 0 (or acc_threshold above 1)
// nothing is ever pruned and the global model follows FedAvg bit for bit.
type lotteryFL struct {
	rate, target, threshold float64
	rewind                  bool
}

func newLotteryFL(p *LotteryFLParams) train.Method {
	return &lotteryFL{rate: p.PruneRate, target: p.TargetSparsity, threshold: p.AccThreshold,
		rewind: p.Rewind != "none"}
}

// lotteryFLState holds each client's subnetwork mask (Keep; nil before it first prunes)
// and the initial model the survivors rewind to (Init).
type lotteryFLState struct {
	Keep []tensor.List
	Init tensor.List
}

// Slots stores them in the slots "keep" and "init".
func (s *lotteryFLState) Slots() []train.Slot {
	return []train.Slot{train.ListsSlot("keep", s.Keep), train.ListSlot("init", &s.Init)}
}

func (f *lotteryFL) Init(st *train.State, clients int) {
	st.Personal = make([]tensor.List, clients)
	st.Method = &lotteryFLState{Keep: make([]tensor.List, clients), Init: st.Global}
	for c := range st.Personal {
		st.Personal[c] = st.Global
	}
}

// apply returns params ⊙ keep (keep nil: params itself).
func apply(params, keep tensor.List) tensor.List {
	if keep == nil {
		return params
	}
	out := params.Clone()
	for _, t := range out {
		m := keep[keep.Find(t.Name)].Data
		for i := range t.Data {
			if m[i] == 0 {
				t.Data[i] = 0
			}
		}
	}
	return out
}

// prune removes from keep, in every weight tensor, the rate fraction (rounded) of its kept
// entries with the smallest |θ|, leaving at least (1 − target) of the tensor. It returns
// the new mask (a copy) and whether anything was pruned. Ties go to the lower index.
func (f *lotteryFL) prune(theta, keep tensor.List) (tensor.List, bool) {
	if keep == nil {
		keep = invert(train.ZeroMask(theta))
	}
	out := keep.Clone()
	pruned := false
	for _, t := range theta {
		if !isWeight(t) {
			continue
		}
		m := out[out.Find(t.Name)].Data
		var kept []int
		for i, v := range m {
			if v != 0 {
				kept = append(kept, i)
			}
		}
		minKeep := int(math.Ceil((1 - f.target) * float64(len(m))))
		k := min(int(math.Round(f.rate*float64(len(kept)))), len(kept)-minKeep)
		if k <= 0 {
			continue
		}
		sort.SliceStable(kept, func(a, b int) bool {
			return math.Abs(float64(t.Data[kept[a]])) < math.Abs(float64(t.Data[kept[b]]))
		})
		for _, i := range kept[:k] {
			m[i] = 0
		}
		pruned = true
	}
	return out, pruned
}

// sparsity is the pruned fraction of the weight tensors under keep.
func sparsity(keep tensor.List) float64 {
	zeros, total := 0, 0
	for _, t := range keep {
		if !isWeight(t) {
			continue
		}
		for _, v := range t.Data {
			if v == 0 {
				zeros++
			}
		}
		total += len(t.Data)
	}
	if total == 0 {
		return 0
	}
	return float64(zeros) / float64(total)
}

func (f *lotteryFL) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	keep := st.Method.(*lotteryFLState).Keep[c]
	theta := apply(st.Global, keep)
	if f.target > 0 && sparsity(keep) < f.target-1e-12 {
		acc, err := train.Evaluate(l.Model(), theta, l.TrainX(), l.TrainY())
		if err != nil {
			return train.Upload{}, err
		}
		if acc.Accuracy >= f.threshold {
			next, pruned := f.prune(theta, keep)
			if pruned {
				keep = next
				if f.rewind {
					theta = apply(st.Method.(*lotteryFLState).Init, keep)
				} else {
					theta = apply(theta, keep)
				}
			}
		}
	}
	trained, err := l.Fit(theta, train.Fit{Mask: keep})
	return train.Upload{Params: trained, NextMask: keep}, err
}

func (f *lotteryFL) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	ids, models, weights := bySize(uploads, sizes)
	skip := make([]tensor.List, len(ids))
	for i, c := range ids {
		u := uploads[c]
		if u.NextMask != nil {
			skip[i] = invert(u.NextMask) // train.MaskedAverage skips entries marked 1
		}
	}
	g, err := train.MaskedAverage(models, skip, weights, st.Global)
	if err != nil {
		return err
	}
	st.Global = g
	for _, c := range ids {
		st.Personal[c] = uploads[c].Params
		st.Method.(*lotteryFLState).Keep[c] = uploads[c].NextMask
	}
	return nil
}

func (f *lotteryFL) EvalModel(st *train.State, c int) tensor.List { return st.Personal[c] }

// Comm: the values of the client's subnetwork each way (its mask after this round's
// pruning), and the mask itself (one bit per weight entry) up.
func (f *lotteryFL) Comm(st *train.State, c int, u train.Upload) (int64, int64) {
	kept := int64(u.Params.NumElements())
	var bits int64
	if u.NextMask != nil {
		ones, _ := count(u.NextMask)
		kept = int64(ones)
		for _, t := range u.NextMask {
			if isWeight(t) {
				bits += int64(len(t.Data))
			}
		}
	}
	return 4 * kept, 4*kept + (bits+7)/8
}
