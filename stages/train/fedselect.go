package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/rng"
)

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
}

func newFedSelect(p map[string]float64, o map[string]string) (Method, error) {
	f := &fedSelect{official: o["variant"] == "official", alpha: p["alpha"], p: p["p"],
		lrV: float32(p["lr_personal"]), lrU: float32(p["lr_shared"]), growEvery: int(p["grow_every"]), rule: o["selection"]}
	if f.growEvery < 1 {
		f.growEvery = 1
	}
	if f.rule == "" {
		f.rule = "largest"
	}
	if f.p == 0 {
		f.p = defaultP(f.official)
	}
	for _, prefix := range strings.Split(o["fixed_layers"], ",") {
		if prefix = strings.TrimSpace(prefix); prefix != "" {
			f.fixed = append(f.fixed, prefix)
		}
	}
	return f, nil
}

// fixedMask personalizes every tensor whose name starts with one of the fixed prefixes.
func (f *fedSelect) fixedMask(like tensor.List) tensor.List {
	mask := zeroMask(like)
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

func (f *fedSelect) Init(st *State, clients int) {
	st.Personal = make([]tensor.List, clients)
	st.Masks = make([]tensor.List, clients)
	for c := range st.Personal {
		st.Personal[c] = st.Global
		st.Masks[c] = zeroMask(st.Global)
		if f.fixed != nil {
			st.Masks[c] = f.fixedMask(st.Global)
		}
	}
	if f.official {
		st.Aux = map[string][]tensor.List{"anchor": make([]tensor.List, clients), officialLocal: make([]tensor.List, clients)}
	}
}

func (f *fedSelect) Train(l *Local, st *State, c int) (Upload, error) {
	f.rounds = l.Rounds()
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
		theta, err = l.Train(theta, nil, lrU, l.Epochs(), "shuffle")
	} else {
		shared := invert(mask)
		for e := 0; e < l.Epochs() && err == nil; e++ {
			if theta, err = l.Train(theta, mask, lrV, 1, fmt.Sprintf("localalt-v%d", e)); err == nil {
				theta, err = l.Train(theta, shared, lrU, 1, fmt.Sprintf("localalt-u%d", e))
			}
		}
	}
	if err != nil {
		return Upload{}, err
	}
	next := mask.Clone()
	rnd := rng.New(l.seed, l.round, c, "fedselect/random")
	if f.fixed != nil {
		return Upload{Params: theta, NextMask: next}, nil
	}
	if f.official {
		anchor := st.Aux["anchor"][c]
		if anchor == nil {
			anchor = before
		}
		if officialGrowth(l.round, f.growEvery) {
			f.growPerLayer(next, theta, anchor, rnd)
			anchor = theta
		}
		st.Aux["anchor"][c] = anchor
	} else {
		f.growGlobal(next, theta, before, rnd)
	}
	return Upload{Params: theta, NextMask: next}, nil
}

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

func (f *fedSelect) Finish(st *State, uploads map[int]Upload, _ map[int]int) error {
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
	g, err := MaskedAverage(models, masks, weights, st.Global)
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

func (f *fedSelect) EvalModel(st *State, c int) tensor.List {
	if m, ok := officialEval(f.official, st, c); ok {
		return m
	}
	return merge(st.Global, st.Personal[c], st.Masks[c])
}

// Comm: a client receives the shared entries of its current mask and sends its trained
// shared entries plus its mask (one bit per entry) so the server can count ω.
func (f *fedSelect) Comm(st *State, c int, u Upload) (int64, int64) {
	ones, total := count(st.Masks[c])
	shared := 4 * int64(total-ones)
	return shared, shared + int64((total+7)/8)
}
