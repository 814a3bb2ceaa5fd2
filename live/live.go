// Package live publishes a running train stage's progress, round by round, where another
// process can read it while the stage runs: a small JSON journal per stage in the store
// directory's progress folder (ProgressDir) and, for a run with a remote, as an object of
// the remote (artifacts/remote's progress objects). fedpipe status --watch and fedpipe
// serve read them (screens/watch, screens/page, a layer above pipeline, which writes them).
//
// A journal is never part of a stage's key or result: it holds wall-clock times and the
// name of the process that trained, which differ from one run of the same stage to the
// next, and it is read off values the training loop computes anyway (train.RoundStats).
// It is bounded (MaxPoints) and kept after the stage ends, marked finished, failed or
// interrupted, so a page shows a finished run's training-loss curve too; the next run of
// the same stage key replaces it.
package live

import (
	"encoding/json"
	"fmt"
	"time"
)

// States of a journal as its writer leaves it. A reader adds Stalled: a journal still
// Running whose writer is gone (status.go).
const (
	Running     = "running"
	Finished    = "finished"
	Failed      = "failed"
	Interrupted = "interrupted"
	Stalled     = "stalled"
)

// MaxPoints bounds a journal's points: past it, every second point without an evaluation
// is dropped (Journal.add), so a journal stays under about 150 KB however long the run.
const MaxPoints = 1000

// Journal is one train stage's progress as published while it runs.
type Journal struct {
	// Key is the stage's key (hex), Name its display name (pipeline.Node.Name).
	Key  string `json:"key"`
	Name string `json:"name"`
	// Rounds is the run's total number of rounds.
	Rounds int    `json:"rounds"`
	State  string `json:"state"`
	// Error is why a failed stage failed.
	Error string `json:"error,omitempty"`
	// Holder names the process training: a worker's remote holder name, else host:pid.
	Holder string `json:"holder"`
	Host   string `json:"host"`
	PID    int    `json:"pid"`
	// Leased: a worker trains the stage under a lease of the remote, whose renewals say
	// it is alive (artifacts/remote.LeaseOf).
	Leased bool `json:"leased,omitempty"`
	// LeaseTTL is the worker's lease lifetime in seconds (--lease-ttl): a reader deems the
	// worker gone when its lease has not been renewed for that long.
	LeaseTTL float64 `json:"lease_ttl_seconds,omitempty"`
	// TookOverFrom is the holder whose expired lease this worker took over ("" if none).
	TookOverFrom string `json:"took_over_from,omitempty"`
	// ResumedFrom is the round the stage resumed after (0: from the start).
	ResumedFrom int       `json:"resumed_from,omitempty"`
	Started     time.Time `json:"started"`
	Updated     time.Time `json:"updated"`
	// Seq counts the journal's writes, so a reader can tell a rewritten journal.
	Seq    int     `json:"seq"`
	Points []Point `json:"points"`
}

// Point is one round's figures.
type Point struct {
	Round int `json:"round"`
	// Seconds is the wall time since the stage started, at the round's end.
	Seconds float64 `json:"seconds"`
	// Clients trained this round; TrainLoss is their mean training loss (absent when no
	// client trained through mini-batches).
	Clients   int      `json:"clients"`
	TrainLoss *float64 `json:"train_loss,omitempty"`
	// Eval holds the round's evaluation, when it had one.
	Eval *Eval `json:"eval,omitempty"`
}

// Eval is one evaluation's client means (unweighted, as the report's tables).
type Eval struct {
	TestAccuracy float64 `json:"test_accuracy"`
	TestLoss     float64 `json:"test_loss"`
	// TestFTAccuracy is the test accuracy after fine-tuning, for runs that fine-tune.
	TestFTAccuracy *float64 `json:"test_ft_accuracy,omitempty"`
	// TrainAccuracy is the accuracy on the clients' training sets, when evaluated.
	TrainAccuracy *float64 `json:"train_accuracy,omitempty"`
}

// Last is the journal's last point (zero Point when none).
func (j *Journal) Last() Point {
	if len(j.Points) == 0 {
		return Point{}
	}
	return j.Points[len(j.Points)-1]
}

// LastEval is the journal's latest evaluation and its round (nil when none yet).
func (j *Journal) LastEval() (*Eval, int) {
	for i := len(j.Points) - 1; i >= 0; i-- {
		if j.Points[i].Eval != nil {
			return j.Points[i].Eval, j.Points[i].Round
		}
	}
	return nil, 0
}

// ETA estimates the time left from the rate of rounds since the first point (0: unknown).
func (j *Journal) ETA() time.Duration {
	if len(j.Points) < 2 || j.State != Running {
		return 0
	}
	first, last := j.Points[0], j.Last()
	if last.Round <= first.Round || last.Round >= j.Rounds {
		return 0
	}
	per := (last.Seconds - first.Seconds) / float64(last.Round-first.Round)
	return time.Duration(per * float64(j.Rounds-last.Round) * float64(time.Second))
}

// add appends p and thins the journal to MaxPoints.
func (j *Journal) add(p Point) {
	j.Points = append(j.Points, p)
	for len(j.Points) > MaxPoints {
		j.Points = thin(j.Points)
	}
}

// thin drops every second point that has no evaluation, keeping the first and last.
func thin(ps []Point) []Point {
	out := ps[:0:0]
	odd := false
	for i, p := range ps {
		if p.Eval != nil || i == 0 || i == len(ps)-1 {
			out = append(out, p)
			continue
		}
		if !odd {
			out = append(out, p)
		}
		odd = !odd
	}
	if len(out) == len(ps) { // nothing to drop but evaluations: keep the newest
		out = append(out[:0:0], ps[len(ps)-MaxPoints:]...)
	}
	return out
}

// Decode parses a journal, checking that it names a stage.
func Decode(b []byte) (*Journal, error) {
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("progress journal: %w", err)
	}
	if j.Key == "" {
		return nil, fmt.Errorf("progress journal: no stage key")
	}
	return &j, nil
}

// Recorder is what a running stage publishes its rounds to (pipeline.StageContext; a
// stage context without it publishes nothing).
type Recorder interface {
	Publish(Point)
}

// FormatDuration writes a duration as the progress displays show it: tenths of a second
// under a minute ("4.2s"), whole seconds past it ("3m7s").
func FormatDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}
