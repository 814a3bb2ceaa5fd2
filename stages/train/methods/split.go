package methods

import (
	"slices"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/train"
)

// split covers the baselines that cut the model into a body and a head by layer name
// (the head is every tensor named "classifier.*"):
//
//   - FedPer (Arivazhagan et al.): the head stays on the client, body and head train
//     jointly, the server averages the body weighted by training-set size.
//   - LG-FedAvg (Liang et al.): the reverse — the body stays on the client, the head is
//     global (invert).
//   - FedRep (Collins et al.): the head stays on the client; each round trains the head
//     alone for head_epochs (FedRep's τ_h; 10 in its paper), then the body alone for the
//     run's local epochs; the server averages the body.
//   - FedBABU (Oh et al.): the head keeps its random initialization for all of federated
//     training — only the body trains and is averaged; for evaluation each client
//     fine-tunes the head alone for head_epochs.
//
// Personal tensors start from the common initial model; a client that never trained
// holds the global body and the initial head.
//
// With flbench (impl: flbench of lgfedavg and fedrep) the server does what FL-bench does
// for these methods (the fork at uglyghost/FedOBP): every client uploads all its
// parameters (src/client/fedavg.py:37,180-182) and the server averages all of them by
// training-set size, personal ones included (src/server/fedavg.py:656-667); a client then
// overrides the personal part with its own copy once it has one (src/client/fedavg.py:
// 143-144, src/utils/trainer.py:54-55). So a client's first round starts from the
// averaged model whole, not from the initial personal part; such a client holds a nil
// State.Personal entry. Both directions carry the whole model.
type split struct {
	personal   []string // name prefixes of the head
	invert     bool     // personal is the complement of the named tensors (LG-FedAvg)
	schedule   string
	headEpochs int
	flbench    bool
	// globalLayers > 0 selects FL-bench's LG-FedAvg split by layer (see layerMask)
	// instead of by name.
	globalLayers int
	// bodyEpochs is FL-bench FedRep's train_body_epoch: the last bodyEpochs of the run's
	// local epochs train the body, the ones before the head (schedule "rep" with flbench).
	bodyEpochs int
}

// isPersonal reports whether the tensor named name stays on the client.
func (s *split) isPersonal(name string) bool {
	named := false
	for _, p := range s.personal {
		named = named || strings.HasPrefix(name, p)
	}
	return named != s.invert
}

// layerOf is the layer (module) a tensor belongs to: its name up to the last dot
// ("conv1" for "conv1.weight", "layer1.0.bn1" for "layer1.0.bn1.bias").
func layerOf(name string) string {
	if i := strings.LastIndex(name, "."); i >= 0 {
		return name[:i]
	}
	return name
}

// layerMask is FL-bench's LG-FedAvg split (src/client/lgfedavg.py:10-21): the model's
// conv, BatchNorm and linear layers in model order (here the canonical order of like, one
// layer per name prefix with its weight and bias); the first global of them are shared,
// the parameters of every later one (the classifier included) personal. A BatchNorm
// layer's running statistics go with it: under `buffers: global`, which every FedOBP log
// names, FL-bench turns them into parameters (src/utils/models.py:47-57), so its loop at
// :19-21 names a personal layer's statistics personal too.
func layerMask(like tensor.List, global int) tensor.List {
	m := train.ZeroMask(like)
	var layers []string
	for _, t := range m {
		l := layerOf(t.Name)
		if !slices.Contains(layers, l) {
			layers = append(layers, l)
		}
		if slices.Index(layers, l) < global {
			continue
		}
		for i := range t.Data {
			t.Data[i] = 1
		}
	}
	return m
}

// mask returns 1 on the client's own tensors.
func (s *split) mask(like tensor.List) tensor.List {
	if s.globalLayers > 0 {
		return layerMask(like, s.globalLayers)
	}
	m := train.ZeroMask(like)
	for _, t := range m {
		if s.isPersonal(t.Name) {
			for i := range t.Data {
				t.Data[i] = 1
			}
		}
	}
	return m
}

func (s *split) Init(st *train.State, clients int) {
	st.Personal = make([]tensor.List, clients)
	if s.flbench {
		return // nil: the client has no copy of its own yet
	}
	for c := range st.Personal {
		st.Personal[c] = st.Global
	}
}

// model is client c's model: the global one with its own part put in (the global one
// whole for a flbench client that has never trained).
func (s *split) model(st *train.State, c int) tensor.List {
	if st.Personal[c] == nil {
		return st.Global
	}
	return merge(st.Global, st.Personal[c], s.mask(st.Global))
}

func (s *split) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	own := s.mask(st.Global)
	theta := s.model(st, c)
	var err error
	switch {
	case s.schedule == "rep" && s.flbench:
		// FL-bench's FedRep (src/client/fedrep.py:62-79): of the local epochs, the first
		// local_epoch − train_body_epoch train the head alone, the rest the body alone,
		// with one optimizer. Its frozen part's gradient is set to None
		// (Module.zero_grad's default in torch 2.x; the fork pins torch~=2.2.0,
		// .env/requirements.txt:1), so SGD skips it: the body's momentum is still zero
		// when the body epochs begin, and the head's is never read again (the optimizer
		// is reset every round, reset_optimizer_on_global_epoch: true). Two masked
		// trainings, each with momentum from zero, are therefore that one optimizer
		// (TestFedRepFLBenchOneOptimizer).
		body := min(s.bodyEpochs, l.Epochs())
		if theta, err = l.Fit(theta, train.Fit{Mask: own, Stream: "fedrep-head", Epochs: train.Exactly(l.Epochs() - body)}); err == nil {
			theta, err = l.Fit(theta, train.Fit{Mask: invert(own), Epochs: train.Exactly(body)})
		}
	case s.schedule == "rep":
		if theta, err = l.Fit(theta, train.Fit{Mask: own, Stream: "fedrep-head", Epochs: train.Exactly(s.headEpochs)}); err == nil {
			theta, err = l.Fit(theta, train.Fit{Mask: invert(own)})
		}
	case s.schedule == "babu":
		theta, err = l.Fit(theta, train.Fit{Mask: invert(own)})
	default:
		theta, err = l.Fit(theta, train.Fit{})
	}
	return train.Upload{Params: theta, NextMask: own}, err
}

func (s *split) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	if s.flbench {
		for c, u := range uploads {
			st.Personal[c] = u.Params
		}
		return fedAvg{}.Finish(st, uploads, sizes)
	}
	ids, models, weights := bySize(uploads, sizes)
	masks := make([]tensor.List, len(ids))
	for i, c := range ids {
		masks[i] = uploads[c].NextMask
	}
	g, err := train.MaskedAverage(models, masks, weights, st.Global)
	if err != nil {
		return err
	}
	st.Global = g
	for _, c := range ids {
		st.Personal[c] = uploads[c].Params
	}
	return nil
}

func (s *split) EvalModel(st *train.State, c int) tensor.List { return s.model(st, c) }

// Finetune implements train.Finetuner: FedBABU fine-tunes only the head before evaluation,
// and so does FedRep under flbench, for head_epochs (FL-bench's FedRepClient.finetune with
// its full_model = False, src/client/fedrep.py:84-124, for test.client.finetune_epoch).
func (s *split) Finetune(like tensor.List) (epochs int, mask tensor.List, ok bool) {
	if s.schedule != "babu" && (s.schedule != "rep" || !s.flbench) {
		return 0, nil, false
	}
	return s.headEpochs, s.mask(like), true
}

// Comm: only the shared part travels, each way (the whole model under flbench).
func (s *split) Comm(st *train.State, c int, u train.Upload) (int64, int64) {
	if s.flbench {
		return train.ModelBytes(u.Params), train.ModelBytes(u.Params)
	}
	ones, total := count(u.NextMask)
	return 4 * int64(total-ones), 4 * int64(total-ones)
}

// ConcurrentClients implements train.ConcurrentClients: Train reads the state as Finish left
// it and writes only client c's slots, so a round's clients may train at the same time.
func (*split) ConcurrentClients() bool { return true }
