package methods

import (
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
type split struct {
	personal   []string // name prefixes of the head
	invert     bool     // personal is the complement of the named tensors (LG-FedAvg)
	schedule   string
	headEpochs int
}

// isPersonal reports whether the tensor named name stays on the client.
func (s *split) isPersonal(name string) bool {
	named := false
	for _, p := range s.personal {
		named = named || strings.HasPrefix(name, p)
	}
	return named != s.invert
}

// mask returns 1 on the client's own tensors.
func (s *split) mask(like tensor.List) tensor.List {
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
	for c := range st.Personal {
		st.Personal[c] = st.Global
	}
}

func (s *split) Train(l *train.Local, st *train.State, c int) (train.Upload, error) {
	own := s.mask(st.Global)
	theta := merge(st.Global, st.Personal[c], own)
	var err error
	switch s.schedule {
	case "rep":
		if theta, err = l.Train(theta, own, l.LR(), s.headEpochs, "fedrep-head"); err == nil {
			theta, err = l.Train(theta, invert(own), l.LR(), l.Epochs(), "shuffle")
		}
	case "babu":
		theta, err = l.Train(theta, invert(own), l.LR(), l.Epochs(), "shuffle")
	default:
		theta, err = l.Train(theta, nil, l.LR(), l.Epochs(), "shuffle")
	}
	return train.Upload{Params: theta, NextMask: own}, err
}

func (s *split) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
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

func (s *split) EvalModel(st *train.State, c int) tensor.List {
	return merge(st.Global, st.Personal[c], s.mask(st.Global))
}

// Finetune implements train.Finetuner: FedBABU fine-tunes only the head before evaluation.
func (s *split) Finetune(like tensor.List) (epochs int, mask tensor.List, ok bool) {
	if s.schedule != "babu" {
		return 0, nil, false
	}
	return s.headEpochs, s.mask(like), true
}

// Comm: only the shared part travels, each way.
func (s *split) Comm(st *train.State, c int, u train.Upload) (int64, int64) {
	ones, total := count(u.NextMask)
	return 4 * int64(total-ones), 4 * int64(total-ones)
}

// ConcurrentClients implements train.ConcurrentClients: Train reads the state as Finish left
// it and writes only client c's slots, so a round's clients may train at the same time.
func (*split) ConcurrentClients() bool { return true }
