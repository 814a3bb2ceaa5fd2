package stages

import (
	"github.com/fedpipe/fedpipe/stages/train"
)

// totalRoundsMethods are the methods whose first rounds depend on the total number of
// rounds (DM-PFL's phase blocks cut T; FedDST's cosine-annealed readjustment rate): a
// longer run of these is not a continuation of a shorter one, so they never extend.
var totalRoundsMethods = map[string]bool{"dmpfl": true, "dmpfl_plus": true, "feddst": true}

// extension returns the training state of a cached shorter run of this train stage (same
// everything but train.rounds) to continue from, as a longer run from scratch would have
// it after that many rounds: the evaluation the shorter run made at its last round is
// dropped unless the longer run evaluates then too.
func extension(sc Context, clients int) (*train.State, bool) {
	r := sc.Run()
	if totalRoundsMethods[r.Method] {
		return nil, false
	}
	rounds, blobs, ok := sc.LoadExtension()
	if !ok {
		return nil, false
	}
	st, err := decodeState(blobs, clients, r)
	if err != nil || st.Round != rounds {
		return nil, false
	}
	if ev := r.Train.EvalEvery; ev <= 0 || rounds%ev != 0 {
		kept := st.Metrics[:0]
		for _, m := range st.Metrics {
			if m.Round != rounds {
				kept = append(kept, m)
			}
		}
		st.Metrics = kept
	}
	return st, true
}
