package train

import (
	"fmt"
	"math"
	"sort"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/model"
)

// dmpfl is DM-PFL (Zhang et al., KDD 2023): a sparse global model θ_g = w_g ⊙ m_g and per
// client a sparse personal model θ_c = w_g ⊙ (m_g ∩ m_c) + w_c ⊙ (m_c − m_g) (Eq. 4), both
// at weight density 1 − S allocated over the weight tensors by ERK (biases dense).
//
// Rounds follow a schedule of two phases: with iterations = n ≥ 1, the T rounds are cut
// into 2n equal blocks (the last absorbs the remainder) alternating phase 1 and phase 2
// (Fig. 5e–f: "we divide T = 300 rounds equally into each phase"); n = 0 runs phase 1
// only ("iter = 0").
//
//   - Phase 1 (Alg. 1): a sampled client copies w_g into m_g ∩ m_c, trains w_c under m_c
//     for E epochs, and at every readjust_every-th phase-1 participation of that client
//     (Alg. 1 readjusts inside its client loop; readjust_by_round keeps the earlier
//     schedule, rounds divisible by readjust_every) prunes the alpha_s fraction of its
//     active weights with the smallest magnitude and regrows as many by the largest
//     magnitude of the mean gradient over its training data, per tensor (a pruned entry
//     may regrow in the same round and then keeps its value; other regrown entries start
//     at 0). The server sets w_g on the positions some sampled client covers to the
//     size-weighted mask-wise average (Eq. 5; other positions keep their value), then
//     m_g = per tensor the ERK count of largest |w_g| among positions active in more than
//     share_threshold (30%) of the sampled clients' masks.
//   - Phase 2 (Alg. 2, 3): sampled clients train w_g ⊙ m_g under m_g; the server averages
//     them by training-set size on m_g (positions outside keep their value, so a later
//     phase 1 can pick them up). In the last round of each phase-2 block every client runs
//     Alg. 3: m_c ∩ m_g takes w_g, and w_c is trained on m_c − m_g alone for E epochs.
//
// Choices where the paper is silent: the initial mask, shared by the server and every
// client, is a seeded random ERK mask (initialMask, as RigL and FedDST draw it); alpha_s =
// 0.01 every 10 rounds (FedDST's values). With S = 0 every mask is full, nothing is
// personalized, and the run is FedAvg's bit for bit (see TestDMPFLSparsityZeroIsFedAvg).
type dmpfl struct {
	sparsity   float64
	alphaS     float64
	every      int
	iterations int
	share      float64
	total      int  // T, learned from the first Local
	byRound    bool // readjust_by_round: by the global round number, not the client's participations
	// plus selects DM-PFL+'s adaptive inference (Alg. 4) for every evaluation, with base
	// entropies on each client's training data (or its test split with baseOnTest).
	plus, baseOnTest bool
}

// evaluator implements multiModel for DM-PFL+.
func (d *dmpfl) evaluator(m *model.Model, st *State, prepared []tensor.List, data func(c int, test bool) []float32) (Evaluator, error) {
	if !d.plus {
		return plain{m, prepared}, nil
	}
	return newAdaptive(m, prepared, d.EvalGlobal(st), func(c int) []float32 { return data(c, d.baseOnTest) })
}

func newDMPFL(params map[string]float64) *dmpfl {
	return &dmpfl{sparsity: params["sparsity"], alphaS: params["alpha_s"], every: max(int(params["readjust_every"]), 1),
		iterations: int(params["iterations"]), share: params["share_threshold"], byRound: params["readjust_by_round"] != 0}
}

// phase returns 1 or 2, the phase of round t (1-based) of T, whether t is the last round
// of its block.
func (d *dmpfl) phase(t, T int) (phase int, last bool) {
	if d.iterations <= 0 || T <= 0 {
		return 1, t == T
	}
	blocks := 2 * d.iterations
	size := max(T/blocks, 1)
	b := min((t-1)/size, blocks-1)
	end := (b + 1) * size
	if b == blocks-1 {
		end = T
	}
	return 1 + b%2, t == end
}

const globalMaskAux = "global_mask"

// Init leaves the masks unset: they need the run's seed, which the first Train has.
func (d *dmpfl) Init(st *State, clients int) {
	st.Aux = map[string][]tensor.List{globalMaskAux: {nil}, participationsAux: make([]tensor.List, clients)}
	st.Masks = make([]tensor.List, clients)
	st.Personal = make([]tensor.List, clients)
}

// start draws the initial mask on the first call (see initialMask) and gives it to the
// server and every client, with the initial weights on it.
func (d *dmpfl) start(st *State, seed int64) {
	if st.Aux[globalMaskAux][0] != nil {
		return
	}
	m := initialMask(st.Global, d.sparsity, seed)
	st.Aux[globalMaskAux][0] = m
	w := applyMask(st.Global, m)
	for c := range st.Masks {
		st.Masks[c] = m.Clone()
		st.Personal[c] = w
	}
}

// initialMask is DM-PFL's and FedDST's initial mask: per weight tensor, its ERK count of
// positions drawn uniformly from the stream (seed, 0, global, "sparse-init/<tensor>"), as
// RigL and FedDST draw it; biases dense.
func initialMask(params tensor.List, sparsity float64, seed int64) tensor.List {
	return randomMask(params, ERKCounts(params, 1-sparsity), seed, "sparse-init")
}

func (d *dmpfl) globalMask(st *State) tensor.List { return st.Aux[globalMaskAux][0] }

// and returns a ∧ b; andNot returns a ∧ ¬b.
func and(a, b tensor.List) tensor.List {
	out := a.Clone()
	for i, t := range out {
		o := b[b.Find(t.Name)].Data
		for j := range t.Data {
			if o[j] == 0 {
				out[i].Data[j] = 0
			}
		}
	}
	return out
}

func andNot(a, b tensor.List) tensor.List { return and(a, invert(b)) }

// personal returns θ_c (Eq. 4) from the client's weights and mask and the global weights.
func (d *dmpfl) personal(st *State, c int) tensor.List {
	mc := st.Masks[c]
	return applyMask(merge(st.Personal[c], st.Global, and(d.globalMask(st), mc)), mc)
}

func (d *dmpfl) Train(l *Local, st *State, c int) (Upload, error) {
	d.total = l.Rounds()
	d.start(st, l.seed)
	mg := d.globalMask(st)
	if p, _ := d.phase(l.Round(), l.Rounds()); p == 2 {
		theta, err := l.Train(applyMask(st.Global, mg), orNil(mg), l.LR(), l.Epochs(), "shuffle")
		return Upload{Params: theta, NextMask: mg}, err
	}
	mc := st.Masks[c].Clone()
	theta, err := l.Train(d.personal(st, c), orNil(mc), l.LR(), l.Epochs(), "shuffle")
	if err != nil {
		return Upload{}, err
	}
	if d.readjust(st, c, l.Round()) && d.alphaS > 0 {
		g, err := l.Gradient(theta)
		if err != nil {
			return Upload{}, err
		}
		theta = PruneRegrow(theta, g, mc, d.alphaS, true)
	}
	return Upload{Params: theta, NextMask: mc}, nil
}

func (d *dmpfl) Finish(st *State, uploads map[int]Upload, sizes map[int]int) error {
	t := st.Round + 1
	ids, models, weights := bySize(uploads, sizes)
	notShared := make([]tensor.List, len(ids))
	for i, c := range ids {
		notShared[i] = invert(uploads[c].NextMask)
	}
	g, err := MaskedAverage(models, notShared, weights, st.Global)
	if err != nil {
		return err
	}
	st.Global = g
	if p, _ := d.phase(t, d.total); p == 2 {
		return nil
	}
	votes := zeroMask(g)
	for _, c := range ids {
		st.Personal[c], st.Masks[c] = uploads[c].Params, uploads[c].NextMask
		for ti, m := range uploads[c].NextMask {
			for j, v := range m.Data {
				votes[ti].Data[j] += v
			}
		}
	}
	limit := float32(d.share * float64(len(ids)))
	for _, v := range votes {
		for j, n := range v.Data {
			if n > limit {
				v.Data[j] = 1
			} else {
				v.Data[j] = 0
			}
		}
	}
	st.Aux[globalMaskAux][0] = topMagnitudeMask(g, ERKCounts(g, 1-d.sparsity), votes)
	for _, c := range ids {
		st.Selection = append(st.Selection, overlapRows(t, c, st.Masks[c], d.globalMask(st))...)
	}
	return nil
}

// EndRound runs Alg. 3 on every client at the end of each phase-2 block.
func (d *dmpfl) EndRound(st *State, round int, local func(c int) *Local) error {
	if p, last := d.phase(round, d.total); p != 2 || !last {
		return nil
	}
	mg := d.globalMask(st)
	for c := range st.Masks {
		own := andNot(st.Masks[c], mg)
		if ones, _ := count(own); ones == 0 {
			continue
		}
		l := local(c)
		theta, err := l.Train(d.personal(st, c), own, l.LR(), l.Epochs(), "dmpfl-refine")
		if err != nil {
			return fmt.Errorf("refining client %d: %w", c, err)
		}
		st.Personal[c] = theta
		st.Comm = append(st.Comm, Comm{Round: round, Client: c, Down: sparseBytes(mg, true)})
		st.Work = append(st.Work, l.work(round))
	}
	return nil
}

func (d *dmpfl) EvalModel(st *State, c int) tensor.List { return d.personal(st, c) }

// EvalGlobal returns θ_g = w_g ⊙ m_g.
func (d *dmpfl) EvalGlobal(st *State) tensor.List { return applyMask(st.Global, d.globalMask(st)) }

// Comm: the sparse global model and its mask down; in phase 1 the client's sparse weights
// and mask up, in phase 2 its weights on m_g.
func (d *dmpfl) Comm(st *State, c int, u Upload) (int64, int64) {
	mg := d.globalMask(st)
	down := sparseBytes(mg, true)
	if p, _ := d.phase(st.Round+1, d.total); p == 2 {
		return down, sparseBytes(mg, false)
	}
	return down, sparseBytes(u.NextMask, true)
}

// fedDST is FedDST (Bibikar et al., AAAI 2022): sparse FedAvg with dynamic masks. The
// server holds one sparse model (ERK, density 1 − S; a seeded random initial mask). Each
// sampled client trains it under its mask for E epochs; every readjust_every rounds it
// then prunes the α_t fraction of each weight tensor's active entries with the smallest
// magnitude and regrows as many inactive ones (not the just-pruned) with the largest mean
// gradient magnitude, starting at 0; α_t = alpha_s/2·(1 + cos(π·t/T)) is annealed by
// cosine as in FedDST and RigL. The server averages each entry over the clients whose
// mask holds it, by training-set size; in readjustment rounds it then takes the new mask
// by voting — per tensor the ERK count of entries held by the most clients, ties to the
// larger aggregated magnitude, then the lower position — and zeroes the rest. Every
// client is evaluated with the global sparse model.
type fedDST struct {
	sparsity, alphaS float64
	every            int
	total            int
}

func newFedDST(params map[string]float64) *fedDST {
	return &fedDST{sparsity: params["sparsity"], alphaS: params["alpha_s"], every: max(int(params["readjust_every"]), 1)}
}

// Init leaves the mask unset: it needs the run's seed, which the first Train has.
func (f *fedDST) Init(st *State, clients int) {
	st.Aux = map[string][]tensor.List{globalMaskAux: {nil}}
}

func (f *fedDST) readjust(t int) bool { return t%f.every == 0 && f.alphaS > 0 }

// rate is α_t.
func (f *fedDST) rate(t int) float64 { return cosineAnneal(f.alphaS, t, f.total) }

func (f *fedDST) Train(l *Local, st *State, c int) (Upload, error) {
	f.total = l.Rounds()
	if st.Aux[globalMaskAux][0] == nil {
		m := initialMask(st.Global, f.sparsity, l.seed)
		st.Aux[globalMaskAux][0] = m
		st.Global = applyMask(st.Global, m)
	}
	m := st.Aux[globalMaskAux][0]
	theta, err := l.Train(st.Global, orNil(m), l.LR(), l.Epochs(), "shuffle")
	if err != nil || !f.readjust(l.Round()) {
		return Upload{Params: theta, NextMask: m}, err
	}
	g, err := l.Gradient(theta)
	if err != nil {
		return Upload{}, err
	}
	mc := m.Clone()
	theta = PruneRegrow(theta, g, mc, f.rate(l.Round()), false)
	return Upload{Params: theta, NextMask: mc}, nil
}

func (f *fedDST) Finish(st *State, uploads map[int]Upload, sizes map[int]int) error {
	t := st.Round + 1
	ids, models, weights := bySize(uploads, sizes)
	notShared := make([]tensor.List, len(ids))
	votes := zeroMask(st.Global)
	for i, c := range ids {
		notShared[i] = invert(uploads[c].NextMask)
		for ti, m := range uploads[c].NextMask {
			for j, v := range m.Data {
				votes[ti].Data[j] += v
			}
		}
	}
	g, err := MaskedAverage(models, notShared, weights, st.Global)
	if err != nil {
		return err
	}
	m := st.Aux[globalMaskAux][0]
	if f.readjust(t) {
		m = voteMask(votes, g, maskCounts(m))
		st.Aux[globalMaskAux][0] = m
	}
	st.Global = applyMask(g, m)
	return nil
}

// voteMask keeps, per weight tensor, the counts[name] entries with the most votes, ties
// to the larger |w|, then the lower position; other tensors are dense.
func voteMask(votes, w tensor.List, counts map[string]int) tensor.List {
	m := zeroMask(w)
	for i, t := range m {
		k, ok := counts[t.Name]
		if !ok {
			fill(t.Data, 1)
			continue
		}
		v := votes[votes.Find(t.Name)].Data
		d := w[w.Find(t.Name)].Data
		idx := make([]int, len(t.Data))
		for j := range idx {
			idx[j] = j
		}
		sort.SliceStable(idx, func(a, b int) bool {
			x, y := idx[a], idx[b]
			if v[x] != v[y] {
				return v[x] > v[y]
			}
			return abs32(d[x]) > abs32(d[y])
		})
		for _, j := range idx[:min(k, len(idx))] {
			m[i].Data[j] = 1
		}
	}
	return m
}

// cosineAnneal is a/2·(1 + cos(π·t/T)).
func cosineAnneal(a float64, t, T int) float64 {
	if T <= 0 {
		return a
	}
	return a / 2 * (1 + math.Cos(math.Pi*float64(t)/float64(T)))
}

func (f *fedDST) EvalModel(st *State, _ int) tensor.List { return st.Global }

// Comm: the sparse model and its mask down; the client's sparse weights up, with its mask
// in readjustment rounds.
func (f *fedDST) Comm(st *State, c int, u Upload) (int64, int64) {
	m := st.Aux[globalMaskAux][0]
	return sparseBytes(m, true), sparseBytes(u.NextMask, f.readjust(st.Round+1))
}
