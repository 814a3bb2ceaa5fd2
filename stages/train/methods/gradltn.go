package methods

import (
	"fmt"
	"math"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/train"
)

// fedSelectV1 is FedSelect as the workshop paper (seed 002) defines it: every round, each
// sampled client first searches a mask with GradLTN (Alg. 1) starting from its current
// model θ_0 — iteration 0 trains all entries for ltn_epochs; each later iteration keeps
// trainable the p fraction of the previously trainable entries that changed most in the
// previous iteration, rewinds to θ_0, and trains only those — so after ltn_iterations the
// personalized fraction is about p^ltn_iterations. The mask's entries are personalized.
// Then LocalAlt (local_epochs of a personalized pass and a shared pass) starts from θ_0
// (ltn_return: start) or from the last GradLTN iterate (final, the variant the paper
// proposes to explore). The server averages each entry over the clients whose new mask is
// 0 there (Alg. 2); a client keeps its personalized values and takes the average elsewhere.
type fedSelectV1 struct {
	p          float64
	iterations int
	epochs     int
	fromFinal  bool
	frozenBN   bool // bn_train official: BatchNorm frozen after the first round
}

func newFedSelectV1(p *FedSelectParams) *fedSelectV1 {
	f := &fedSelectV1{p: p.P, iterations: p.LTNIterations, epochs: p.LTNEpochs,
		fromFinal: p.LTNReturn == "final", frozenBN: p.BNTrain == "official"}
	if f.p == 0 {
		f.p = defaultP(false)
	}
	return f
}

func (f *fedSelectV1) Init(st *train.State, clients int) {
	st.Personal = make([]tensor.List, clients)
	st.Masks = make([]tensor.List, clients)
	for c := range st.Personal {
		st.Personal[c] = st.Global
		st.Masks[c] = train.ZeroMask(st.Global)
	}
}

// gradLTN returns the mask of entries to personalize and the last iterate.
func (f *fedSelectV1) gradLTN(l *train.Local, theta0 tensor.List) (tensor.List, tensor.List, error) {
	trainable := invert(train.ZeroMask(theta0)) // iteration 0: everything
	var iterate tensor.List
	for i := 0; i <= f.iterations; i++ {
		if i > 0 {
			var cands []entry
			for t, m := range trainable {
				for j, v := range m.Data {
					if v != 0 {
						cands = append(cands, entry{t, j})
					}
				}
			}
			k := int(math.Round(f.p * float64(len(cands))))
			change := func(e entry) float32 { return abs32(iterate[e.t].Data[e.i] - theta0[e.t].Data[e.i]) }
			next := train.ZeroMask(theta0)
			for _, e := range choose(cands, change, k, "largest", nil) {
				next[e.t].Data[e.i] = 1
			}
			trainable = next
		}
		var err error
		if iterate, err = l.Fit(theta0, train.Fit{Mask: trainable, Stream: fmt.Sprintf("gradltn%d", i), Epochs: train.Exactly(f.epochs)}); err != nil {
			return nil, nil, err
		}
	}
	return trainable, iterate, nil
}

func (f *fedSelectV1) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	l = bnTrainLocal(f.frozenBN, l)
	theta0 := merge(st.Global, st.Personal[c], st.Masks[c])
	mask, last, err := f.gradLTN(l, theta0)
	if err != nil {
		return train.Upload{}, err
	}
	theta := theta0
	if f.fromFinal {
		theta = last
	}
	shared := invert(mask)
	for e := 0; e < l.Epochs() && err == nil; e++ {
		if theta, err = l.Fit(theta, train.Fit{Mask: mask, Stream: fmt.Sprintf("localalt-v%d", e), Epochs: 1}); err == nil {
			theta, err = l.Fit(theta, train.Fit{Mask: shared, Stream: fmt.Sprintf("localalt-u%d", e), Epochs: 1})
		}
	}
	if err != nil {
		return train.Upload{}, err
	}
	return train.Upload{Params: theta, NextMask: mask}, nil
}

func (f *fedSelectV1) Finish(st *train.State, uploads map[int]train.Upload, _ map[int]int) error {
	ids := sortedClients(uploads)
	models := make([]tensor.List, len(ids))
	masks := make([]tensor.List, len(ids))
	weights := make([]float64, len(ids))
	for i, c := range ids {
		models[i], masks[i], weights[i] = uploads[c].Params, uploads[c].NextMask, 1
	}
	g, err := train.MaskedAverage(models, masks, weights, st.Global)
	if err != nil {
		return err
	}
	st.Global = g
	for _, c := range ids {
		st.Personal[c], st.Masks[c] = uploads[c].Params, uploads[c].NextMask
		st.Selection = append(st.Selection, selectionRows(st.Round+1, c, st.Masks[c])...)
	}
	return nil
}

func (f *fedSelectV1) EvalModel(st *train.State, c int) tensor.List {
	return merge(st.Global, st.Personal[c], st.Masks[c])
}

// Comm: the client receives the shared entries of its previous mask and sends the shared
// entries of its new one with the mask itself.
func (f *fedSelectV1) Comm(st *train.State, c int, u train.Upload) (int64, int64) {
	oldOnes, total := count(st.Masks[c])
	newOnes, _ := count(u.NextMask)
	return 4 * int64(total-oldOnes), 4*int64(total-newOnes) + int64((total+7)/8)
}
