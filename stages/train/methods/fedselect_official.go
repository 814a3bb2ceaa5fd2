package methods

import (
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/train"
)

// defaultP is FedSelect's personalization rate when the manifest leaves p at 0: the
// official code's --prune_percent 25 (per layer), and 0.05 (our choice; the paper leaves
// it to an appendix) for Alg. 1-3 as written.
func defaultP(official bool) float64 {
	if official {
		return 0.25
	}
	return 0.05
}

// officialGrowth reports whether the official code grows masks in the 1-based round: its
// loop grows when the 0-based round index r satisfies r % every == 0 and r != 0.
func officialGrowth(round, every int) bool {
	r := round - 1
	return r != 0 && r%every == 0
}

// officialGrows reports whether the official code may personalize entries of t: any tensor
// whose name ends in "weight" (convolution and linear weights, BatchNorm scales).
func officialGrows(t tensor.Tensor) bool { return strings.HasSuffix(t.Name, "weight") }

// keepLocal records the round's local models of the official variant (evaluated unmerged;
// fedSelectState.Local) and reports whether the round is the run's last, which the
// official code ends without aggregating: then the masks still take their new values and
// nothing else changes.
func (f *fedSelect) keepLocal(st *train.State, uploads map[int]train.Upload) bool {
	ids := sortedClients(uploads)
	s := st.Method.(*fedSelectState)
	for _, c := range ids {
		s.Local[c] = uploads[c].Params
	}
	if st.Round+1 < f.rounds {
		return false
	}
	for _, c := range ids {
		st.Masks[c] = uploads[c].NextMask
		st.Selection = append(st.Selection, selectionRows(st.Round+1, c, st.Masks[c])...)
	}
	return true
}

// officialEval returns, for the official variant, client c's model right after its last
// local training (shared entries included, unmerged), as the official code evaluates it;
// false for the paper variant or a client that never trained.
func officialEval(official bool, st *train.State, c int) (tensor.List, bool) {
	if !official {
		return nil, false
	}
	s, ok := st.Method.(*fedSelectState)
	if !ok || s.Local == nil || s.Local[c] == nil {
		return nil, false
	}
	return s.Local[c], true
}

// bnTrainLocal returns the Local a FedSelect client trains with: with frozen (bn_train
// official), from the run's second round on, one whose training keeps BatchNorm in
// evaluation mode (train.Local.WithFrozenBN). The official code's model starts in train
// mode; its evaluate, first run after every client's round-1 training (fedselect.py:188,
// cross_client_eval → evaluate), calls model.eval() (:40), and no line calls train(), so
// rounds 2 on train with the running statistics frozen.
func bnTrainLocal(frozen bool, l *train.Local) *train.Local {
	if frozen && l.Round() > 1 {
		return l.WithFrozenBN()
	}
	return l
}
