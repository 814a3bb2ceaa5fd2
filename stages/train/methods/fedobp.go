package methods

import (
	"math"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/train"
)

// FedOBPParams are fedobp's parameters.
type FedOBPParams struct {
	Q         float64 `param:"q" default:"0.999705" check:"unit" doc:"quantile of the scores above which entries stay personal (official FMNIST value 0.999705)"`
	Score     string  `param:"score" choices:"obp|obp_v1|gradient|fisher" doc:"obp: (theta_c - theta_g)^2; obp_v1: |(theta_c - theta_g) * theta_c|; gradient: |theta after - theta before| of the client's last local training; fisher: mean squared per-sample gradient at theta_c"`
	Threshold string  `param:"threshold" choices:"global|layer" doc:"one quantile over all eligible entries, or one per tensor"`
	Norm      string  `param:"norm" choices:"global|layer|none" doc:"min-max normalization of the scores over all entries, per tensor, or none"`
	ClsOnly   bool    `param:"cls_only" default:"0" check:"unit" doc:"1: select only within the classifier layer"`
	EMA       float64 `param:"ema" default:"0" check:"unit,lt1" doc:"exponential moving average of a client's raw scores across its participations, normalized after averaging as the official code does (0: off)"`
	Impl      string  `param:"impl" choices:"paper|flbench" doc:"which entries may be selected: paper scores the trained parameters only (BatchNorm running statistics always take model.bn_stats' treatment); flbench scores every state_dict tensor, BatchNorm running statistics included, as the authors' FL-bench fork (src/client/fedobp.py:21-22,81-86,176-189; with buffers: global they are parameters there, src/utils/models.py:47-57). The fork's score is obp_v1"`
	Fisher    string  `param:"fisher" choices:"full|empirical" doc:"the fisher score: full squares the gradient of the mean training loss (FedOBP Eq. 6); empirical averages squared per-sample gradients (FedDPA's form)"`
}

func init() {
	train.Register(manifest.MethodDef{Name: "fedobp", Display: "FedOBP", Cost: manifest.CostIs(1, "local training as FedAvg's; the score, quantile and merge are per-parameter, once a client"), Extension: manifest.ExtensionIs(manifest.ExtendAlways), Personal: true,
		ScoreQuantile: manifest.ScoreQuantile{Score: "score", Q: "q"},
		Doc:           "FedOBP: before training, a client keeps its own value at entries whose importance score exceeds the q-quantile and takes the global value elsewhere; the server runs size-weighted FedAvg over the full models."},
		newFedOBP)
}

// fedOBP implements FedOBP (seed 003). Before training in a round, client c scores every
// entry by comparing its model from its last participation θ_c (the initial model if it
// never trained) with the current global model θ_g:
//
//	obp:      (θ_c − θ_g)²
//	obp_v1:   |(θ_c − θ_g)·θ_c|          (the authors' earlier release)
//	gradient: |θ̃ − θ| of the client's last local training (FedSelect-style; 0 before it trained)
//	fisher:   with fisher "full" (default; FedOBP Eq. 6), the square of the gradient of
//	          the client's mean training loss at θ_c; with "empirical" (FedDPA's form), the
//	          mean over its training samples of the squared per-sample gradient
//
// A client that never trained is scored with the initial model θ_init as θ_c and keeps
// θ_init on its top entries (the official code). With ema, the raw scores are averaged
// across participations and the average is normalized (the official code's order).
//
// normalized by min-max over all entries (global), per tensor (layer) or not at all
// (none); optionally averaged across participations (ema); optionally restricted to the
// classifier (cls_only). τ is the q-quantile of the scores (linear interpolation, see
// Quantile); entries scoring strictly above τ keep θ_c, every other entry takes θ_g — so
// ties at τ take the global value, and q = 1 personalizes nothing. With threshold "layer"
// each tensor has its own τ, the q-quantile of its own scores. The merged model then
// trains normally, and the server averages the full uploaded models weighted by
// training-set size. A client is evaluated with the model it would start its next round
// from: its last model merged with the current global model by the same rule (for the
// Fisher score, which needs the client's data, with the mask of its last participation).
//
// FedDPA, the Fisher-based baseline of FedOBP's tables, is this method with the Fisher
// score, no normalization and a per-tensor threshold at q = 0.4 (docs/methods.md).
type fedOBP struct {
	q        float64
	score    string
	norm     string
	clsOnly  bool
	ema      float64
	perLayer bool
	// fisherFull squares the full-data gradient (Eq. 6) instead of averaging squared
	// per-sample gradients (FedDPA's empirical Fisher).
	fisherFull bool
	// batchedFisher takes the empirical Fisher with Local.BatchedFisher (FedDPA's) rather
	// than Local.Fisher (FedOBP's fisher "empirical", whose bits its runs keep).
	batchedFisher bool
	// scoreStats (impl flbench) lets BatchNorm running statistics be selected like any
	// entry.
	scoreStats bool
}

func newFedOBP(p *FedOBPParams) train.Method {
	f := &fedOBP{q: p.Q, score: p.Score, norm: p.Norm, clsOnly: p.ClsOnly, ema: p.EMA,
		perLayer: p.Threshold == "layer", fisherFull: p.Fisher != "empirical", scoreStats: p.Impl == "flbench"}
	if f.score == "" {
		f.score = "obp"
	}
	if f.norm == "" {
		f.norm = "global"
	}
	return f
}

func (f *fedOBP) Init(st *train.State, clients int) {
	st.Personal = make([]tensor.List, clients)
	st.Masks = make([]tensor.List, clients)
	st.Method = &fedOBPState{Delta: make([]tensor.List, clients), Score: make([]tensor.List, clients),
		Init: st.Global.Clone()}
}

// fedOBPState holds, per client, the change of its last local training (Delta, for the
// gradient score) and its score average (Score, with ema; raw, normalized after
// averaging), nil until it applies; and the run's initial model (Init: the θ_c of a
// client that never trained).
type fedOBPState struct {
	Delta, Score []tensor.List
	Init         tensor.List
}

// Slots stores them in the slots "delta", "score" and "init".
func (s *fedOBPState) Slots() []train.Slot {
	return []train.Slot{train.ListsSlot("delta", s.Delta), train.ListsSlot("score", s.Score), train.ListSlot("init", &s.Init)}
}

func newFedDPA(p *FedDPAParams) train.Method {
	return &fedOBP{q: p.Q, score: "fisher", norm: "none", perLayer: true, batchedFisher: true}
}

// scores computes client c's importance scores (normalized) against the current global
// model; l supplies the client's data for the Fisher score.
func (f *fedOBP) scores(st *train.State, c int, l *train.Local) (tensor.List, error) {
	own := st.Personal[c]
	out := train.ZeroMask(st.Global)
	if own == nil {
		if own = initialOf(st); own == nil {
			return out, nil // a state without the initial model: nothing to keep
		}
	}
	if f.score == "fisher" {
		fi, err := f.fisher(l, own)
		if err != nil {
			return nil, err
		}
		if f.ema == 0 {
			f.normalize(fi)
		}
		return fi, nil
	}
	for t, s := range out {
		g, p := st.Global[t].Data, own[t].Data
		switch f.score {
		case "obp_v1":
			for i := range s.Data {
				s.Data[i] = abs32((p[i] - g[i]) * p[i])
			}
		case "gradient":
			if d := st.Method.(*fedOBPState).Delta[c]; d != nil {
				for i := range s.Data {
					s.Data[i] = abs32(d[t].Data[i])
				}
			}
		default:
			for i := range s.Data {
				d := p[i] - g[i]
				s.Data[i] = d * d
			}
		}
	}
	if f.ema == 0 {
		f.normalize(out)
	}
	return out, nil
}

func (f *fedOBP) normalize(s tensor.List) {
	minMax := func(ts tensor.List) {
		lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
		for _, t := range ts {
			for _, v := range t.Data {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		for _, t := range ts {
			for i, v := range t.Data {
				if hi > lo {
					t.Data[i] = (v - lo) / (hi - lo)
				} else {
					t.Data[i] = 0
				}
			}
		}
	}
	switch f.norm {
	case "global":
		minMax(s)
	case "layer":
		for _, t := range s {
			minMax(tensor.List{t})
		}
	}
}

// eligible reports whether entries of the tensor called name may be selected: not BatchNorm
// running statistics (never trained; model.bn_stats decides whether they are shared)
// unless impl is flbench, and only the classifier's with cls_only.
func (f *fedOBP) eligible(name string) bool {
	return (f.scoreStats || !model.IsRunningStat(name)) && (!f.clsOnly || isClassifier(name))
}

// selectMask returns the mask of entries scoring above the q-quantile of the eligible
// entries, or of their own tensor's entries with a per-layer threshold.
func (f *fedOBP) selectMask(score tensor.List) tensor.List {
	if f.perLayer {
		mask := train.ZeroMask(score)
		for ti, t := range score {
			if !f.eligible(t.Name) {
				continue
			}
			tau := Quantile(append([]float32(nil), t.Data...), f.q)
			for i, v := range t.Data {
				if v > tau {
					mask[ti].Data[i] = 1
				}
			}
		}
		return mask
	}
	var vals []float32
	for _, t := range score {
		if f.eligible(t.Name) {
			vals = append(vals, t.Data...)
		}
	}
	tau := Quantile(vals, f.q)
	mask := train.ZeroMask(score)
	for ti, t := range score {
		if !f.eligible(t.Name) {
			continue
		}
		for i, v := range t.Data {
			if v > tau {
				mask[ti].Data[i] = 1
			}
		}
	}
	return mask
}

// personalize returns client c's starting model and its mask; with a train.Local (in training)
// it also advances the client's score average. Without one (evaluation), the Fisher score
// reuses the client's last mask.
func (f *fedOBP) personalize(st *train.State, c int, l *train.Local) (tensor.List, tensor.List, error) {
	if st.Personal[c] == nil && (initialOf(st) == nil || f.score == "gradient" || (l == nil && f.score == "fisher")) {
		return st.Global, train.ZeroMask(st.Global), nil
	}
	if l == nil && f.score == "fisher" {
		return merge(st.Global, st.Personal[c], st.Masks[c]), st.Masks[c], nil
	}
	s, err := f.scores(st, c, l)
	if err != nil {
		return nil, nil, err
	}
	update := l != nil
	if prev := st.Method.(*fedOBPState).Score[c]; f.ema > 0 && prev != nil {
		for t := range s {
			for i := range s[t].Data {
				s[t].Data[i] = float32(f.ema*float64(prev[t].Data[i]) + (1-f.ema)*float64(s[t].Data[i]))
			}
		}
	}
	if update && f.ema > 0 {
		st.Method.(*fedOBPState).Score[c] = s.Clone()
	}
	if f.ema > 0 {
		f.normalize(s)
	}
	mask := f.selectMask(s)
	own := st.Personal[c]
	if own == nil {
		own = initialOf(st)
	}
	return merge(st.Global, own, mask), mask, nil
}

func (f *fedOBP) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	start, mask, err := f.personalize(st, c, l)
	if err != nil {
		return train.Upload{}, err
	}
	trained, err := l.Fit(start, train.Fit{})
	if err != nil {
		return train.Upload{}, err
	}
	if f.score == "gradient" {
		d := trained.Clone()
		for t := range d {
			for i := range d[t].Data {
				d[t].Data[i] -= start[t].Data[i]
			}
		}
		st.Method.(*fedOBPState).Delta[c] = d
	}
	return train.Upload{Params: trained, NextMask: mask}, nil
}

func (f *fedOBP) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	if err := (fedAvg{}).Finish(st, uploads, sizes); err != nil {
		return err
	}
	for _, c := range sortedClients(uploads) {
		st.Personal[c] = uploads[c].Params
		st.Masks[c] = uploads[c].NextMask
		st.Selection = append(st.Selection, selectionRows(st.Round+1, c, st.Masks[c])...)
	}
	return nil
}

func (f *fedOBP) EvalModel(st *train.State, c int) tensor.List {
	m, _, err := f.personalize(st, c, nil)
	if err != nil { // only the Fisher score can fail, and it does not run here
		panic(err)
	}
	return m
}

// ConcurrentClients implements train.ConcurrentClients: Train reads the state as Finish left
// it and writes only client c's slots, so a round's clients may train at the same time.
func (*fedOBP) ConcurrentClients() bool { return true }
