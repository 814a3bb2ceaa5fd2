package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fedpipe/fedpipe/live"
)

// Settled reports whether no run can change any more: each finished or failed.
func Settled(runs []Run) bool {
	for _, r := range runs {
		if r.State != live.Finished && r.State != live.Failed {
			return false
		}
	}
	return true
}

// Text is one line per run (state, label, detail, latest figures) and a summary.
func Text(runs []Run) string {
	var b strings.Builder
	width := 0
	for _, r := range runs {
		width = max(width, len(r.Label))
	}
	for _, r := range runs {
		line := fmt.Sprintf("%-11s %-*s", r.State, width, r.Label)
		if r.Detail != "" {
			line += "  " + r.Detail
		}
		if m := Latest(r.Journal); m != "" {
			line += "  " + m
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	b.WriteString(Summary(runs) + "\n")
	return b.String()
}

// Summary counts the runs by state, e.g. "4 runs: 1 finished, 1 training, 2 waiting".
func Summary(runs []Run) string {
	count := map[string]int{}
	for _, r := range runs {
		count[r.State]++
	}
	parts := []string{}
	for _, s := range []string{live.Finished, Training, Waiting, live.Stalled, live.Failed, live.Interrupted} {
		if count[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[s], s))
		}
	}
	return fmt.Sprintf("%d runs: %s", len(runs), strings.Join(parts, ", "))
}

// Latest is a journal's latest training loss and evaluation, in words.
func Latest(j *live.Journal) string {
	if j == nil || len(j.Points) == 0 {
		return ""
	}
	var parts []string
	for i := len(j.Points) - 1; i >= 0; i-- {
		if l := j.Points[i].TrainLoss; l != nil {
			parts = append(parts, fmt.Sprintf("train loss %.4f", *l))
			break
		}
	}
	if e, round := j.LastEval(); e != nil {
		s := fmt.Sprintf("test acc %.2f%%", 100*e.TestAccuracy)
		if e.TestFTAccuracy != nil {
			s += fmt.Sprintf(", %.2f%% fine-tuned", 100**e.TestFTAccuracy)
		}
		parts = append(parts, s+fmt.Sprintf(" (round %d)", round))
	}
	return strings.Join(parts, ", ")
}

// FollowOptions says how Follow prints.
type FollowOptions struct {
	// JSON prints a line of JSON per refresh ({"time", "runs"}); otherwise the runs' text.
	JSON bool
	// Clear redraws the text in place (a terminal); otherwise it is printed when it changes.
	Clear bool
	// Interval is the time between refreshes; Once prints once and returns.
	Interval time.Duration
	Once     bool
}

// Follow prints the runs' states every Interval until every run has finished or failed,
// or ctx ends (nil then); an error is a failure to read them.
func (w *Watch) Follow(ctx context.Context, out io.Writer, o FollowOptions) error {
	last := ""
	for {
		runs, err := w.Runs(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		switch {
		case o.JSON:
			if b, err := json.Marshal(map[string]any{"time": time.Now().UTC().Format(time.RFC3339), "runs": runs}); err == nil {
				fmt.Fprintf(out, "%s\n", b)
			}
		default:
			text := Text(runs)
			if o.Clear {
				fmt.Fprint(out, "\x1b[H\x1b[2J")
			}
			if o.Clear || text != last {
				fmt.Fprintf(out, "%s  (store %s)\n%s", time.Now().Format("15:04:05"), w.Dir, text)
				if !o.Clear {
					fmt.Fprintln(out)
				}
			}
			last = text
		}
		if o.Once || Settled(runs) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.Interval):
		}
	}
}
