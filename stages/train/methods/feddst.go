package methods

import (
	"math"
	"sync"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FedDSTParams are feddst's parameters.
type FedDSTParams struct {
	Sparsity      float64 `param:"sparsity" default:"0.5" check:"unit,lt1" doc:"S: the fraction of weights inactive (ERK allocation over the weight tensors; biases dense)"`
	AlphaS        float64 `param:"alpha_s" default:"0.01" check:"unit" doc:"readjustment ratio before annealing (FedDST: 0.01)"`
	ReadjustEvery int     `param:"readjust_every" default:"10" check:"gt0" doc:"rounds between mask readjustments (FedDST: 10)"`
}

func init() {
	train.Register(manifest.MethodDef{Name: "feddst", Display: "FedDST", Cost: manifest.PlainTraining, Extension: manifest.ExtensionIs(manifest.ExtendNever),
		Doc: "FedDST (Bibikar et al., AAAI 2022): sparse FedAvg with dynamic masks - clients prune by magnitude and regrow by gradient every readjust_every rounds (cosine-annealed rate), the server aggregates the masks by voting; every client is evaluated with the global sparse model."},
		newFedDST)
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
	// begin guards what the first Train of a run sets for all (total, the initial mask on
	// the global model), as a round's clients may train at the same time.
	begin sync.Mutex
}

func newFedDST(p *FedDSTParams) train.Method {
	return &fedDST{sparsity: p.Sparsity, alphaS: p.AlphaS, every: max(p.ReadjustEvery, 1)}
}

// Init leaves the mask unset: it needs the run's seed, which the first Train has.
func (f *fedDST) Init(st *train.State, clients int) {
	st.Method = &sparseState{}
}

func (f *fedDST) readjust(t int) bool { return t%f.every == 0 && f.alphaS > 0 }

// rate is α_t.
func (f *fedDST) rate(t int) float64 { return cosineAnneal(f.alphaS, t, f.total) }

// ConcurrentClients implements train.ConcurrentClients: past the guarded start, Train
// reads the state as Finish left it and writes nothing but its Upload.
func (*fedDST) ConcurrentClients() bool { return true }

func (f *fedDST) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	f.begin.Lock()
	if f.total != l.Rounds() { // written once: later clients read it unlocked
		f.total = l.Rounds()
	}
	if st.Method.(*sparseState).GlobalMask == nil {
		m := initialMask(st.Global, f.sparsity, l.Seed())
		st.Method.(*sparseState).GlobalMask = m
		st.Global = applyMask(st.Global, m)
	}
	f.begin.Unlock()
	m := st.Method.(*sparseState).GlobalMask
	theta, err := l.Fit(st.Global, train.Fit{Mask: orNil(m)})
	if err != nil || !f.readjust(l.Round()) {
		return train.Upload{Params: theta, NextMask: m}, err
	}
	g, err := l.Gradient(theta)
	if err != nil {
		return train.Upload{}, err
	}
	mc := m.Clone()
	theta = PruneRegrow(theta, g, mc, f.rate(l.Round()), false)
	return train.Upload{Params: theta, NextMask: mc}, nil
}

func (f *fedDST) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	t := st.Round + 1
	ids, models, weights := bySize(uploads, sizes)
	notShared := make([]tensor.List, len(ids))
	votes := train.ZeroMask(st.Global)
	for i, c := range ids {
		notShared[i] = invert(uploads[c].NextMask)
		for ti, m := range uploads[c].NextMask {
			for j, v := range m.Data {
				votes[ti].Data[j] += v
			}
		}
	}
	g, err := train.MaskedAverage(models, notShared, weights, st.Global)
	if err != nil {
		return err
	}
	m := st.Method.(*sparseState).GlobalMask
	if f.readjust(t) {
		m = voteMask(votes, g, maskCounts(m))
		st.Method.(*sparseState).GlobalMask = m
	}
	st.Global = applyMask(g, m)
	return nil
}

// voteMask keeps, per weight tensor, the counts[name] entries with the most votes, ties
// to the larger |w|, then the lower position; other tensors are dense.
func voteMask(votes, w tensor.List, counts map[string]int) tensor.List {
	all := func(_ string, n int) []int {
		idx := make([]int, n)
		for j := range idx {
			idx[j] = j
		}
		return idx
	}
	before := func(name string) func(x, y int) bool {
		v := votes[votes.Find(name)].Data
		d := w[w.Find(name)].Data
		return func(x, y int) bool {
			if v[x] != v[y] {
				return v[x] > v[y]
			}
			return abs32(d[x]) > abs32(d[y])
		}
	}
	return rankedMask(w, counts, all, before)
}

// cosineAnneal is a/2·(1 + cos(π·t/T)).
func cosineAnneal(a float64, t, T int) float64 {
	if T <= 0 {
		return a
	}
	return a / 2 * (1 + math.Cos(math.Pi*float64(t)/float64(T)))
}

func (f *fedDST) EvalModel(st *train.State, _ int) tensor.List { return st.Global }

// Comm: the sparse model and its mask down; the client's sparse weights up, with its mask
// in readjustment rounds.
func (f *fedDST) Comm(st *train.State, c int, u train.Upload) (int64, int64) {
	m := st.Method.(*sparseState).GlobalMask
	return sparseBytes(m, true), sparseBytes(u.NextMask, f.readjust(st.Round+1))
}
