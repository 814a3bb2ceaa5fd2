package stages

import (
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/train"
)

// extension returns the training state of a cached shorter run of this train stage (same
// everything but train.rounds) to continue from, as a longer run from scratch would have
// it after that many rounds: the evaluation the shorter run made at its last round is
// dropped unless the longer run evaluates then too. Methods whose schedule depends on
// the total rounds (manifest.Extendable) never extend. method is the run's method
// (train.NewRunMethod).
func extension(sc Context, clients int, method train.Method) (*train.State, bool) {
	r := sc.Run()
	if !manifest.Extendable(r) {
		return nil, false
	}
	rounds, blobs, ok := sc.LoadExtension()
	if !ok {
		return nil, false
	}
	st, err := train.DecodeState(blobs, clients, method)
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
