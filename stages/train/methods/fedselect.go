package methods

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/rng"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FedSelectParams are fedselect's parameters.
type FedSelectParams struct {
	Variant       string  `param:"variant" choices:"paper|official|v1" doc:"paper: Alg. 1-3 (global growth every round, capped at alpha); official: the authors' code (per-layer growth of weight tensors every grow_every rounds, delta since the last growth, alpha checked before growing); v1: the workshop version (a GradLTN mask search with rewinding every round, then LocalAlt)"`
	Alpha         float64 `param:"alpha" default:"0.5" check:"unit" doc:"personalization limit: the largest personalized fraction"`
	P             float64 `param:"p" default:"0" check:"unit" doc:"personalization rate: the fraction of shared entries (per layer in the official variant) added per growth; 0: the variant's default, 0.25 for official (the code's --prune_percent 25) and 0.05 otherwise (the papers leave it to an appendix: our choice)"`
	LRPersonal    float32 `param:"lr_personal" default:"0" check:"ge0" doc:"gamma_v, the rate of the personalized pass (0: train.lr)"`
	LRShared      float32 `param:"lr_shared" default:"0" check:"ge0" doc:"gamma_u, the rate of the shared pass (0: train.lr)"`
	GrowEvery     int     `param:"grow_every" default:"3" check:"gt0" doc:"official variant: grow in the rounds whose 0-based index is a positive multiple of this (1-based rounds 4, 7, 10, ... for 3), as the code's round % 3 == 0 and round != 0"`
	LTNIterations int     `param:"ltn_iterations" default:"5" check:"ge0" doc:"v1: GradLTN pruning iterations L (5 in the workshop paper)"`
	LTNEpochs     int     `param:"ltn_epochs" default:"5" check:"gt0" doc:"v1: local epochs per GradLTN iteration E (5 in the workshop paper)"`
	LTNReturn     string  `param:"ltn_return" choices:"start|final" doc:"v1: LocalAlt starts from the model before GradLTN (Alg. 1) or from its last iterate"`
	FixedLayers   string  `param:"fixed_layers" doc:"comma-separated parameter-name prefixes (e.g. classifier, conv1) personalized from the start, with no growth: FedSelect Table 3's single-layer ablations, and FedAlt's fixed split"`
	Selection     string  `param:"selection" choices:"largest|least|random" doc:"which shared entries become personal: the largest updates (FedSelect), the least-changing (Table 3 ablation), or random ones of the same count"`
	BNTrain       string  `param:"bn_train" choices:"auto|official|always" doc:"BatchNorm mode of local training: always trains in train mode (batch statistics, running statistics updated); official trains so in the first round only and from the second on with BatchNorm frozen (running statistics normalize and stay unchanged), as the official code, whose evaluate calls model.eval() after round 1 and nothing calls train() again (fedselect.py:40,188); auto: official for the official variant, always otherwise. No effect without BatchNorm"`
	Accuracy      string  `param:"accuracy" choices:"auto|per_sample|per_batch" doc:"a client's accuracy: the fraction of its test samples classified correctly (per_sample), or the mean of the accuracies of its test batches of train.batch_size in order (per_batch, the official code's evaluate); auto: per_batch for the official variant, per_sample otherwise"`
}

func init() {
	train.Register(manifest.MethodDef{Name: "fedselect", Display: "FedSelect", Cost: fedSelectCost, Extension: fedselectExtension, Personal: true,
		Doc: "FedSelect (Tamirisa et al., CVPR 2024): each client grows a mask of personalized entries from its largest updates (GradSelect with LocalAlt); the server averages each entry over the clients that share it."},
		func(p *FedSelectParams) train.Method {
			if p.Variant == "v1" {
				return newFedSelectV1(p)
			}
			return newFedSelect(p)
		})
}

// fedSelectCost is FedSelect's implied cost. LocalAlt's epoch is a pass updating the
// personalized entries and one updating the shared (two trainings); a client whose mask is
// still empty trains once (fedSelect.Train), so in the paper and official variants the
// second pass costs in proportion to the sampled clients that grew a mask in an earlier
// round: any earlier round they trained in (paper), or an earlier growth round (official,
// officialGrowth). fixed_layers set the mask before the first round; v1 adds GradLTN's
// ltn_iterations+1 trainings of ltn_epochs before LocalAlt.
func fedSelectCost(c manifest.CostOf) manifest.ImpliedCost {
	e := float64(c.Epochs)
	switch {
	case strings.TrimSpace(c.Options["fixed_layers"]) != "":
		return manifest.ImpliedCost{Multiple: 2, Why: "LocalAlt on fixed layers: every epoch a pass over the personal entries and one over the shared (two trainings)"}
	case c.Options["variant"] == "v1":
		ltn := (max(c.Params["ltn_iterations"], 0) + 1) * max(c.Params["ltn_epochs"], 1)
		return manifest.ImpliedCost{Multiple: (ltn + 2*e) / e,
			Why: "GradLTN's ltn_iterations+1 trainings of ltn_epochs, then LocalAlt's two passes an epoch"}
	case c.Params["alpha"] <= 0:
		return manifest.ImpliedCost{Multiple: 1, Why: "alpha 0: nothing is ever personalized, so every round is one training"}
	case c.Options["variant"] == "official":
		every := max(int(c.Params["grow_every"]), 1)
		f := c.TrainedBefore(func(r int) bool { return officialGrowth(r, every) })
		return manifest.ImpliedCost{Multiple: 1 + f, Why: fmt.Sprintf("LocalAlt's two trainings for a client trained in an earlier growth round (%.2f of those sampled over the rounds counted), one otherwise", f)}
	}
	f := c.TrainedBefore(func(int) bool { return true })
	return manifest.ImpliedCost{Multiple: 1 + f, Why: fmt.Sprintf("LocalAlt's two trainings for a client trained in an earlier round (%.2f of those sampled over the rounds counted), one while its mask is empty", f)}
}

// fedSelect implements FedSelect (seed 000, Alg. 1–3) in two variants.
//
// variant "paper": every round each sampled client runs GradSelect — L epochs of LocalAlt,
// each a pass over its data updating only the personalized entries (rate lr_personal),
// then a pass updating only the shared entries (rate lr_shared); momentum restarts at each
// pass. If its personalized fraction is below alpha, the p fraction of its shared entries
// with the largest |Δu| over the round joins the mask (OR), never taking the fraction past
// alpha; the new mask applies from the next round. While nothing is personalized the v
// passes are empty, and the L shared passes run as one L-epoch training, exactly FedAvg's.
//
// variant "official" (the authors' code): growth only in rounds whose 0-based index is a
// positive multiple of grow_every (1-based rounds 4, 7, 10, … for 3), per tensor whose name
// ends in "weight" (BatchNorm scales included, biases stay shared), with Δ measured since
// the client's last growth (so it spans aggregations); a tensor grows by p (default 0.25,
// the code's --prune_percent 25) of its shared entries whenever its personalized fraction
// is below alpha, checked before growing (so it may overshoot); one learning rate. Each
// client is evaluated with its model right after its local training, unmerged (see
// officialEval), and the last round aggregates nothing.
//
// With bn_train official (the official variant's default) the first round trains with
// BatchNorm in train mode and every later round with it frozen (bnTrainLocal).
//
// Both variants follow Alg. 1's broadcast: the shared entries of the mask the client
// trained with take the aggregate, so an entry personalized this round starts from the
// aggregated value (§4.2).
//
// With fixed_layers the mask is fixed from the start to whole tensors (by name prefix) and
// never grows: a layer-wise split trained by LocalAlt (FedSelect Table 3's single-layer
// ablations; FedAlt).
//
// The server averages each entry, unweighted, over the sampled clients whose mask is 0
// there (counts ω); an entry no sampled client shares keeps its global value. A client
// holds the global value on its shared entries and its own on personalized ones.
type fedSelect struct {
	fixed     []string // fixed_layers: personalized name prefixes, no growth
	official  bool
	alpha, p  float64
	lrV, lrU  float32
	growEvery int
	rule      string
	rounds    int // the run's rounds, learnt in Train (official: no aggregation in the last)
	roundsSet sync.Once
	perBatch  bool
	frozenBN  bool // bn_train official: BatchNorm frozen after the first round
}

func newFedSelect(p *FedSelectParams) *fedSelect {
	f := &fedSelect{official: p.Variant == "official", alpha: p.Alpha, p: p.P,
		lrV: p.LRPersonal, lrU: p.LRShared, growEvery: p.GrowEvery, rule: p.Selection}
	if f.growEvery < 1 {
		f.growEvery = 1
	}
	if f.rule == "" {
		f.rule = "largest"
	}
	f.perBatch = p.Accuracy == "per_batch" || (p.Accuracy == "auto" && f.official)
	f.frozenBN = p.BNTrain == "official" || (p.BNTrain == "auto" && f.official)
	if f.p == 0 {
		f.p = defaultP(f.official)
	}
	for _, prefix := range strings.Split(p.FixedLayers, ",") {
		if prefix = strings.TrimSpace(prefix); prefix != "" {
			f.fixed = append(f.fixed, prefix)
		}
	}
	return f
}

// fixedMask personalizes every tensor whose name starts with one of the fixed prefixes.
func (f *fedSelect) fixedMask(like tensor.List) tensor.List {
	mask := train.ZeroMask(like)
	for _, t := range mask {
		for _, prefix := range f.fixed {
			if strings.HasPrefix(t.Name, prefix) {
				for i := range t.Data {
					t.Data[i] = 1
				}
			}
		}
	}
	return mask
}

func (f *fedSelect) Init(st *train.State, clients int) {
	st.Personal = make([]tensor.List, clients)
	st.Masks = make([]tensor.List, clients)
	for c := range st.Personal {
		st.Personal[c] = st.Global
		st.Masks[c] = train.ZeroMask(st.Global)
		if f.fixed != nil {
			st.Masks[c] = f.fixedMask(st.Global)
		}
	}
	if f.official {
		st.Method = &fedSelectState{Anchor: make([]tensor.List, clients), Local: make([]tensor.List, clients)}
	}
}

// fedSelectState holds the official variant's growth anchors (each client's model at its
// last growth) and each client's model as its last local training left it, before
// aggregation and broadcast (Local, evaluated unmerged); nil before the client's first.
type fedSelectState struct{ Anchor, Local []tensor.List }

// Slots stores them in the slots "anchor" and "local".
func (s *fedSelectState) Slots() []train.Slot {
	return []train.Slot{train.ListsSlot("anchor", s.Anchor), train.ListsSlot("local", s.Local)}
}

func (f *fedSelect) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	f.roundsSet.Do(func() { f.rounds = l.Rounds() })
	l = bnTrainLocal(f.frozenBN, l)
	mask := st.Masks[c]
	theta := merge(st.Global, st.Personal[c], mask)
	before := theta
	lrV, lrU := f.lrV, f.lrU
	if lrV == 0 || f.official {
		lrV = l.LR()
	}
	if lrU == 0 || f.official {
		lrU = l.LR()
	}
	var err error
	if ones, _ := count(mask); ones == 0 {
		theta, err = l.Fit(theta, train.Fit{LR: lrU})
	} else {
		shared := invert(mask)
		for e := 0; e < l.Epochs() && err == nil; e++ {
			if theta, err = l.Fit(theta, train.Fit{Mask: mask, Stream: fmt.Sprintf("localalt-v%d", e), LR: lrV, Epochs: 1}); err == nil {
				theta, err = l.Fit(theta, train.Fit{Mask: shared, Stream: fmt.Sprintf("localalt-u%d", e), LR: lrU, Epochs: 1})
			}
		}
	}
	if err != nil {
		return train.Upload{}, err
	}
	next := mask.Clone()
	rnd := rng.New(l.Seed(), l.Round(), c, "fedselect/random")
	if f.fixed != nil {
		return train.Upload{Params: theta, NextMask: next}, nil
	}
	if f.official {
		anchor := st.Method.(*fedSelectState).Anchor[c]
		if anchor == nil {
			anchor = before
		}
		if officialGrowth(l.Round(), f.growEvery) {
			f.growPerLayer(next, theta, anchor, rnd)
			anchor = theta
		}
		st.Method.(*fedSelectState).Anchor[c] = anchor
	} else {
		f.growGlobal(next, theta, before, rnd)
	}
	return train.Upload{Params: theta, NextMask: next}, nil
}

// ConcurrentClients implements train.ConcurrentClients: Train reads the state as Finish
// left it, writes only client c's anchor (official variant), and trains through Local's
// methods, so a round's clients may train at the same time.
func (*fedSelect) ConcurrentClients() bool { return true }

// growGlobal adds the chosen p fraction of the shared entries to mask, across all tensors,
// never past alpha of all entries. BatchNorm running statistics are never candidates (they
// are not trained; model.bn_stats decides whether they are shared).
func (f *fedSelect) growGlobal(mask, after, before tensor.List, rnd *rand.Rand) {
	ones, total := count(mask)
	if float64(ones) >= f.alpha*float64(total) {
		return
	}
	var cands []entry
	for t, m := range mask {
		if model.IsRunningStat(m.Name) {
			continue
		}
		for i, v := range m.Data {
			if v == 0 {
				cands = append(cands, entry{t, i})
			}
		}
	}
	k := int(math.Round(f.p * float64(len(cands))))
	k = min(k, int(math.Floor(f.alpha*float64(total)))-ones)
	delta := func(e entry) float32 { return abs32(after[e.t].Data[e.i] - before[e.t].Data[e.i]) }
	for _, e := range choose(cands, delta, k, f.rule, rnd) {
		mask[e.t].Data[e.i] = 1
	}
}

// growPerLayer adds, in each weight tensor whose personalized fraction is below alpha, the
// chosen p fraction of its shared entries.
func (f *fedSelect) growPerLayer(mask, after, anchor tensor.List, rnd *rand.Rand) {
	for t, m := range mask {
		if !officialGrows(m) {
			continue
		}
		ones, total := count(tensor.List{m})
		if float64(ones) >= f.alpha*float64(total) {
			continue
		}
		var cands []entry
		for i, v := range m.Data {
			if v == 0 {
				cands = append(cands, entry{t, i})
			}
		}
		k := int(math.Round(f.p * float64(len(cands))))
		delta := func(e entry) float32 { return abs32(after[e.t].Data[e.i] - anchor[e.t].Data[e.i]) }
		for _, e := range choose(cands, delta, k, f.rule, rnd) {
			m.Data[e.i] = 1
		}
	}
}

func abs32(x float32) float32 { return float32(math.Abs(float64(x))) }

func (f *fedSelect) Finish(st *train.State, uploads map[int]train.Upload, _ map[int]int) error {
	ids := sortedClients(uploads)
	if f.official && f.keepLocal(st, uploads) {
		return nil
	}
	models := make([]tensor.List, len(ids))
	masks := make([]tensor.List, len(ids))
	weights := make([]float64, len(ids))
	for i, c := range ids {
		models[i], masks[i], weights[i] = uploads[c].Params, st.Masks[c], 1
	}
	g, err := train.MaskedAverage(models, masks, weights, st.Global)
	if err != nil {
		return err
	}
	st.Global = g
	for _, c := range ids {
		// Alg. 1: θ_k ⊙ ¬m_k ← θ_g ⊙ ¬m_k with the mask the client trained with, before
		// the new mask applies.
		st.Personal[c] = merge(st.Global, uploads[c].Params, st.Masks[c])
		st.Masks[c] = uploads[c].NextMask
		st.Selection = append(st.Selection, selectionRows(st.Round+1, c, st.Masks[c])...)
	}
	return nil
}

func (f *fedSelect) EvalModel(st *train.State, c int) tensor.List {
	if m, ok := officialEval(f.official, st, c); ok {
		return m
	}
	return merge(st.Global, st.Personal[c], st.Masks[c])
}

// Comm: a client receives the shared entries of its current mask and sends its trained
// shared entries plus its mask (one bit per entry) so the server can count ω.
func (f *fedSelect) Comm(st *train.State, c int, u train.Upload) (int64, int64) {
	ones, total := count(st.Masks[c])
	shared := 4 * int64(total-ones)
	return shared, shared + int64((total+7)/8)
}

// PerBatchAccuracy implements train.BatchMeanAccuracy: the official variant scores a client
// by its mean per-batch accuracy, as the authors' evaluate does, unless accuracy says
// otherwise.
func (f *fedSelect) PerBatchAccuracy() bool { return f.perBatch }

// fedselectExtension: the official variant's last round aggregates nothing (docs/fidelity.md, FedSelect), so a
// longer run never continues a shorter one; the other variants continue any.
func fedselectExtension(options map[string]string) manifest.Extension {
	if options["variant"] == "official" {
		return manifest.ExtendNever
	}
	return manifest.ExtendAlways
}
