package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fedpipe/fedpipe/live"
	"github.com/fedpipe/fedpipe/model"
)

// Journal is bench --round --journal: the FedOBP-FMNIST (or o.Setting) round timed
// without and with the progress journal a train stage publishes after every round, in the
// order without, with, with, without (so neither gains from running later), each figure the
// mean of its two passes. The journal is written as a worker's is: to a store's progress
// folder and to a remote (here a folder), with an evaluation in every round's point (more
// than a run publishes).
func Journal(backend string, o RoundOptions, stdout, stderr io.Writer) error {
	cfg, _, _, _, err := roundSetting(o.Setting)
	if err != nil {
		return err
	}
	cfg.Rounds, cfg.Workers, cfg.Lockstep, cfg.FinetuneEpochs = o.Rounds, o.Workers, o.Lockstep, 0
	return journalPasses(backend, o.Setting, cfg, stdout, stderr)
}

// journalPasses times cfg's rounds in the four passes of Journal.
func journalPasses(backend, setting string, cfg RoundConfig, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "fedpipe-bench-journal-")
	if err != nil {
		return fmt.Errorf("bench --journal: %v", err)
	}
	defer os.RemoveAll(dir)
	remoteDir := filepath.Join(dir, "remote")
	if err := os.MkdirAll(remoteDir, 0o755); err != nil {
		return fmt.Errorf("bench --journal: %v", err)
	}
	fmt.Fprintf(stdout, "%s round, %d timed rounds per pass, without and with the progress journal (passes: without, with, with, without); backend %s\n",
		setting, cfg.Rounds, model.BackendID(backend))
	fmt.Fprintf(stdout, "load before: %s\n", loadAvg())
	var sum [2]float64 // s/round without, with
	for pass, with := range []bool{false, true, true, false} {
		c := cfg
		var pub *live.Publisher
		if with {
			pub = live.Start(live.Options{Dir: dir, Key: fmt.Sprintf("bench-%d", pass), Name: "bench journal", Rounds: cfg.Rounds,
				Remote: func(_ context.Context, data []byte) error {
					tmp := filepath.Join(remoteDir, ".tmp")
					if err := os.WriteFile(tmp, data, 0o644); err != nil {
						return err
					}
					return os.Rename(tmp, filepath.Join(remoteDir, "journal.json"))
				}})
			c.AfterRound = func(round int) {
				loss, ft := 0.5, 0.9
				pub.Round(live.Point{Round: round, Clients: cfg.Participants, TrainLoss: &loss,
					Eval: &live.Eval{TestAccuracy: 0.8, TestLoss: 0.6, TestFTAccuracy: &ft}})
			}
		}
		r, err := TimeRound(backend, c)
		pub.End(err)
		if with && err == nil {
			if b, rerr := os.ReadFile(live.Path(dir, fmt.Sprintf("bench-%d", pass))); rerr != nil {
				err = rerr
			} else if j, derr := live.Decode(b); derr != nil || j.Last().Round != cfg.Rounds {
				err = fmt.Errorf("the journal did not record the %d rounds timed (%v)", cfg.Rounds, derr)
			}
		}
		if err != nil {
			return fmt.Errorf("bench --round --journal: %v", err)
		}
		fmt.Fprintf(stdout, "pass %d (%s journal): %.3f s/round\n", pass+1, map[bool]string{false: "without", true: "with"}[with], r.RoundSeconds)
		if with {
			sum[1] += r.RoundSeconds / 2
		} else {
			sum[0] += r.RoundSeconds / 2
		}
	}
	fmt.Fprintf(stdout, "without journal %.3f s/round, with %.3f s/round: %+.2f %% (mean of two passes each)\n", sum[0], sum[1], 100*(sum[1]-sum[0])/sum[0])
	fmt.Fprintf(stdout, "load after: %s (figures are valid only on an otherwise idle machine)\n", loadAvg())
	return nil
}
