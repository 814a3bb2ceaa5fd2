package stages

import (
	"context"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/live"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages/train"
)

func (env *Env) train(ctx context.Context, sc Context) (Outputs, error) {
	ds, err := env.dataset(sc)
	if err != nil {
		return nil, err
	}
	a, err := env.assignment(sc)
	if err != nil {
		return nil, err
	}
	// The run's method, built once: it lays out a resumed state, trains, and gives the
	// models stored.
	method, err := train.NewRunMethod(sc.Run())
	if err != nil {
		return nil, err
	}
	cfg := train.Config{Run: sc.Run(), Method: method, Data: ds, Assign: a, Backend: env.Backend, Lockstep: train.LockstepDefault(env.Backend), Hub: env.Hub,
		Checkpoint: func(st *train.State) error {
			return sc.SaveCheckpoint(st.Round, func(put func(string, []byte) error) error {
				return train.WriteCheckpoint(st, put)
			})
		},
		Progress: func(round, rounds int, note string) { sc.Progress(round, rounds, note) },
	}
	if rec, ok := sc.(live.Recorder); ok {
		cfg.Observe = func(s train.RoundStats) { rec.Publish(livePoint(s)) }
	}
	if round, blobs, ok := sc.LoadCheckpoint(); ok {
		if st, err := train.DecodeState(blobs, a.Clients(), method); err == nil && st.Round == round {
			cfg.Resume = st
			sc.Resumed(round)
		}
	}
	if st, ok := extension(sc, a.Clients(), method); ok && (cfg.Resume == nil || cfg.Resume.Round < st.Round) {
		cfg.Resume = st
		sc.Resumed(st.Round)
	}
	st, err := train.Run(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// The outputs derived from the state first; then the state itself, moved into its blobs.
	// Each large blob is stored as soon as it is encoded (PutOutput): holding them all until
	// the stage returns put a second copy of the state beside it at the run's peak (FedDPA
	// flbench, whose state keeps 2 workers' copies of 100 clients' models: 2,043 MiB).
	if train.PersonalModels(sc.Run()) {
		var putErr error
		train.EachEvalModel(method, st, a.Clients(), func(c int, m tensor.List) {
			if putErr == nil {
				putErr = sc.PutOutput(results.ClientOutput(results.ClientModel, c), tensor.Encode(m))
			}
		})
		if putErr != nil {
			return nil, putErr
		}
	}
	out := map[string][]byte{}
	if g, ok := train.EvalGlobal(method, st); ok {
		out[results.OutTrainEvalGlobal] = tensor.Encode(g)
	}
	if out[results.OutTrainCost], err = results.Encode(train.Costs(st.Comm, st.Work, a.Clients()), nil); err != nil {
		return nil, err
	}
	if st.Masks != nil {
		if out[results.OutTrainMaskIoU], err = results.Encode(train.PairwiseIoU(st.Masks), nil); err != nil {
			return nil, err
		}
	}
	if err := train.MoveState(st, sc.PutOutput); err != nil {
		return nil, err
	}
	return out, nil
}
