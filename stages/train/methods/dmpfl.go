package methods

import (
	"fmt"
	"sync"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// DMPFLParams are dmpfl's parameters.
type DMPFLParams struct {
	Sparsity        float64 `param:"sparsity" default:"0.5" check:"unit,lt1" doc:"S: the fraction of weights inactive in every mask (ERK allocation over the weight tensors; biases dense); 0.5 in the paper"`
	AlphaS          float64 `param:"alpha_s" default:"0.01" check:"unit" doc:"readjustment ratio: the fraction of a client's active weights pruned and regrown (unstated in the paper; FedDST's 0.01)"`
	ReadjustEvery   int     `param:"readjust_every" default:"10" check:"gt0" doc:"a client readjusts its mask at every so many of its phase-1 participations (Alg. 1 readjusts inside the client loop; the interval is unstated in the paper: FedDST's 10)"`
	ReadjustByRound bool    `param:"readjust_by_round" default:"0" check:"unit" doc:"1: readjust in the rounds whose number is a multiple of readjust_every instead (fedpipe's earlier schedule)"`
	Iterations      int     `param:"iterations" default:"1" check:"ge0" doc:"iterations of the two phases: T is cut into 2n equal blocks alternating phase 1 and phase 2 (Fig. 5e-f); 0 = phase 1 only; 1 is our default"`
	ShareThreshold  float64 `param:"share_threshold" default:"0.3" check:"unit" doc:"the global mask ignores positions active in no more than this fraction of the sampled clients' masks (30% in the paper)"`
}

func init() {
	train.Register(manifest.MethodDef{Name: "dmpfl", Display: "DM-PFL", Cost: manifest.CostIs(1, "masked local training (dense products on a CPU) and per-parameter mask updates"), Extension: manifest.ExtensionIs(manifest.ExtendNever), Personal: true,
		Doc: "DM-PFL (Zhang et al., KDD 2023): dual masks - a sparse global model and sparse personal models sharing weights where the masks overlap; phase 1 trains the masks (prune/regrow), phase 2 refines the global then the personal weights; clients are evaluated with their personal models."},
		func(p *DMPFLParams) train.Method { return newDMPFL(p) })
}

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
	total      int  // T, learned from the first train.Local
	byRound    bool // readjust_by_round: by the global round number, not the client's participations
	// plus selects DM-PFL+'s adaptive inference (Alg. 4) for every evaluation, with base
	// entropies on each client's training data (or its test split with baseOnTest).
	plus, baseOnTest bool
	// begin guards what the first Train of a run sets for all (total, the initial masks),
	// as a round's clients may train at the same time (ConcurrentClients).
	begin sync.Mutex
}

// MultiEvaluator implements train.MultiModel for DM-PFL+.
func (d *dmpfl) MultiEvaluator(m *model.Model, global func() tensor.List, prepared []tensor.List, data func(c int, test bool) []float32) (train.Evaluator, error) {
	if !d.plus {
		return train.PlainEvaluator(m, prepared), nil
	}
	return newAdaptive(m, prepared, global(), func(c int) []float32 { return data(c, d.baseOnTest) })
}

func newDMPFL(p *DMPFLParams) *dmpfl {
	return &dmpfl{sparsity: p.Sparsity, alphaS: p.AlphaS, every: max(p.ReadjustEvery, 1),
		iterations: p.Iterations, share: p.ShareThreshold, byRound: p.ReadjustByRound}
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

// sparseState holds DM-PFL's and FedDST's global mask m_g (nil until the first Train
// draws it) and, for DM-PFL, each client's count of phase-1 participations (nil for
// FedDST; see readjust).
type sparseState struct {
	GlobalMask     tensor.List
	Participations []int
}

// Slots stores m_g in the slot "global_mask" and, for DM-PFL, the participation counts in
// the slot "participations" (see participationsSlot).
func (s *sparseState) Slots() []train.Slot {
	slots := []train.Slot{train.ListSlot("global_mask", &s.GlobalMask)}
	if s.Participations != nil {
		slots = append(slots, participationsSlot(s.Participations))
	}
	return slots
}

// Init leaves the masks unset: they need the run's seed, which the first Train has.
func (d *dmpfl) Init(st *train.State, clients int) {
	st.Method = &sparseState{Participations: make([]int, clients)}
	st.Masks = make([]tensor.List, clients)
	st.Personal = make([]tensor.List, clients)
}

// start draws the initial mask on the first call (see initialMask) and gives it to the
// server and every client, with the initial weights on it.
func (d *dmpfl) start(st *train.State, seed int64) {
	if st.Method.(*sparseState).GlobalMask != nil {
		return
	}
	m := initialMask(st.Global, d.sparsity, seed)
	st.Method.(*sparseState).GlobalMask = m
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

func (d *dmpfl) globalMask(st *train.State) tensor.List { return st.Method.(*sparseState).GlobalMask }

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
func (d *dmpfl) personal(st *train.State, c int) tensor.List {
	mc := st.Masks[c]
	return applyMask(merge(st.Personal[c], st.Global, and(d.globalMask(st), mc)), mc)
}

// ConcurrentClients implements train.ConcurrentClients: past the guarded start, Train
// reads the state as Finish left it and writes only client c's participation count and
// its Upload.
func (*dmpfl) ConcurrentClients() bool { return true }

func (d *dmpfl) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	d.begin.Lock()
	if d.total != l.Rounds() { // written once: later clients read it unlocked
		d.total = l.Rounds()
	}
	d.start(st, l.Seed())
	d.begin.Unlock()
	mg := d.globalMask(st)
	if p, _ := d.phase(l.Round(), l.Rounds()); p == 2 {
		theta, err := l.Fit(applyMask(st.Global, mg), train.Fit{Mask: orNil(mg)})
		return train.Upload{Params: theta, NextMask: mg}, err
	}
	mc := st.Masks[c].Clone()
	theta, err := l.Fit(d.personal(st, c), train.Fit{Mask: orNil(mc)})
	if err != nil {
		return train.Upload{}, err
	}
	if d.readjust(st, c, l.Round()) && d.alphaS > 0 {
		g, err := l.Gradient(theta)
		if err != nil {
			return train.Upload{}, err
		}
		theta = PruneRegrow(theta, g, mc, d.alphaS, true)
	}
	return train.Upload{Params: theta, NextMask: mc}, nil
}

func (d *dmpfl) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	t := st.Round + 1
	ids, models, weights := bySize(uploads, sizes)
	notShared := make([]tensor.List, len(ids))
	for i, c := range ids {
		notShared[i] = invert(uploads[c].NextMask)
	}
	g, err := train.MaskedAverage(models, notShared, weights, st.Global)
	if err != nil {
		return err
	}
	st.Global = g
	if p, _ := d.phase(t, d.total); p == 2 {
		return nil
	}
	votes := train.ZeroMask(g)
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
	st.Method.(*sparseState).GlobalMask = topMagnitudeMask(g, ERKCounts(g, 1-d.sparsity), votes)
	for _, c := range ids {
		st.Selection = append(st.Selection, overlapRows(t, c, st.Masks[c], d.globalMask(st))...)
	}
	return nil
}

// EndRound runs Alg. 3 on every client at the end of each phase-2 block.
func (d *dmpfl) EndRound(st *train.State, round int, local func(c int) *train.Local) error {
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
		theta, err := l.Fit(d.personal(st, c), train.Fit{Mask: own, Stream: "dmpfl-refine"})
		if err != nil {
			return fmt.Errorf("refining client %d: %w", c, err)
		}
		st.Personal[c] = theta
		st.Comm = append(st.Comm, train.Comm{Round: round, Client: c, Down: sparseBytes(mg, true)})
		st.Work = append(st.Work, l.TakeWork(round))
	}
	return nil
}

func (d *dmpfl) EvalModel(st *train.State, c int) tensor.List { return d.personal(st, c) }

// EvalGlobal returns θ_g = w_g ⊙ m_g.
func (d *dmpfl) EvalGlobal(st *train.State) tensor.List {
	return applyMask(st.Global, d.globalMask(st))
}

// Comm: the sparse global model and its mask down; in phase 1 the client's sparse weights
// and mask up, in phase 2 its weights on m_g.
func (d *dmpfl) Comm(st *train.State, c int, u train.Upload) (int64, int64) {
	mg := d.globalMask(st)
	down := sparseBytes(mg, true)
	if p, _ := d.phase(st.Round+1, d.total); p == 2 {
		return down, sparseBytes(mg, false)
	}
	return down, sparseBytes(u.NextMask, true)
}
