package stages

import (
	"context"
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages/train"
)

func (env *Env) train(ctx context.Context, sc Context) (Outputs, error) {
	ds, err := env.dataset(sc)
	if err != nil {
		return nil, err
	}
	a, err := env.assignment(sc, 0)
	if err != nil {
		return nil, err
	}
	// The run's method, built once: it lays out a resumed state, trains, and gives the
	// models stored.
	method, err := train.NewRunMethod(sc.Run())
	if err != nil {
		return nil, err
	}
	cfg := train.Config{Run: sc.Run(), Method: method, Data: ds, Assign: a, Backend: env.Backend, Lockstep: train.LockstepDefault(env.Backend),
		Checkpoint: func(st *train.State) error {
			return sc.SaveCheckpoint(st.Round, func(put func(string, []byte) error) error {
				return train.WriteCheckpoint(st, put)
			})
		},
		Progress: func(round, rounds int, note string) { sc.Progress(round, rounds, note) },
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
	out := map[string][]byte{}
	if train.PersonalModels(sc.Run()) {
		// One client's model at a time: a list of every client's would sit beside the state
		// and its encoding (100 FedOBP clients: 230 MB more at the run's peak).
		train.EachEvalModel(method, st, a.Clients(), func(c int, m tensor.List) {
			out[clientName("model", c)] = tensor.Encode(m)
		})
	}
	if g, ok := train.EvalGlobal(method, st); ok {
		out["model/global"] = tensor.Encode(g)
	}
	if out["cost"], err = results.Encode(train.Costs(st.Comm, st.Work, a.Clients()), nil); err != nil {
		return nil, err
	}
	if st.Masks != nil {
		if out["mask_iou"], err = results.Encode(train.PairwiseIoU(st.Masks), nil); err != nil {
			return nil, err
		}
	}
	err = train.MoveState(st, func(name string, b []byte) error {
		if _, dup := out[name]; dup {
			return fmt.Errorf("train stage output %q written twice", name)
		}
		out[name] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
