package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/results/summary"
)

// lsEval is one evaluation round of a cached run in `fedpipe ls --evals`: its test accuracy
// in percent, pooled over the clients' test samples and averaged over clients, before
// fine-tuning and after it (nil for a run that does not fine-tune): FL-bench's logged
// "before -> after" figures.
type lsEval struct {
	Round    int      `json:"round"`
	Pooled   float64  `json:"pooled_pct"`
	Mean     float64  `json:"client_mean_pct"`
	PooledFT *float64 `json:"pooled_ft_pct"`
	MeanFT   *float64 `json:"client_mean_ft_pct"`
}

// withEvals fills the Evals of the cached rows of g (listRuns' rows) from their train
// stages' per-round metrics.
func withEvals(rows []lsRow, g *pipeline.Graph, store *artifacts.Store) error {
	byKey := map[string]*pipeline.Node{}
	for _, n := range g.Nodes {
		if n.Kind == manifest.KindEvaluate {
			byKey[n.Key.String()] = n
		}
	}
	for i := range rows {
		r := &rows[i]
		n := byKey[r.Key]
		if r.State != lsCached || n == nil {
			continue
		}
		t := pipeline.TrainOf(n)
		if t == nil {
			continue
		}
		ms, err := trainMetrics(store, t)
		if err != nil {
			return err
		}
		r.Evals = evalsOf(ms)
	}
	return nil
}

// trainMetrics reads a cached train stage's metrics table (nil if it has none).
func trainMetrics(store *artifacts.Store, t *pipeline.Node) ([]results.Metric, error) {
	ms, _, err := results.Read[results.Metric](store, artifacts.Digest(t.Key), results.OutTrainMetrics)
	switch {
	case errors.Is(err, results.ErrNoAction), errors.Is(err, results.ErrNoOutput):
		return nil, nil
	case errors.Is(err, results.ErrBlob), errors.Is(err, results.ErrDecode):
		return nil, fmt.Errorf("%s: metrics: %w", t.Name, err)
	}
	return ms, err
}

// evalsOf summarizes the test rows of each evaluation round, in round order.
func evalsOf(ms []results.Metric) []lsEval {
	ft := map[int]summary.Summary{}
	for _, r := range summary.PerRoundFT(ms) {
		ft[r.Round] = r.Summary
	}
	rounds := summary.PerRound(ms)
	out := make([]lsEval, 0, len(rounds))
	for _, r := range rounds {
		e := lsEval{Round: r.Round, Pooled: 100 * r.Pooled, Mean: 100 * r.Mean}
		if f, ok := ft[r.Round]; ok {
			p, m := 100*f.Pooled, 100*f.Mean
			e.PooledFT, e.MeanFT = &p, &m
		}
		out = append(out, e)
	}
	return out
}

// evalCells are one evaluation row's cells: [manifest,] label, round, then the four
// accuracies ("" where the run does not fine-tune).
func evalCells(r lsRow, e lsEval, multi bool, num func(float64) string) []string {
	var c []string
	if multi {
		c = append(c, r.Manifest)
	}
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return num(*v)
	}
	return append(c, r.Label, strconv.Itoa(e.Round), num(e.Pooled), opt(e.PooledFT), num(e.Mean), opt(e.MeanFT))
}

func writeEvalsCSV(w io.Writer, rows []lsRow) error {
	multi := multiManifest(rows)
	h := []string{"label", "round", "pooled_pct", "pooled_ft_pct", "client_mean_pct", "client_mean_ft_pct"}
	if multi {
		h = append([]string{"manifest"}, h...)
	}
	cw := csv.NewWriter(w)
	_ = cw.Write(h)
	full := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range rows {
		for _, e := range r.Evals {
			_ = cw.Write(evalCells(r, e, multi, full))
		}
	}
	cw.Flush()
	if cw.Error() != nil {
		return exitErr(exitFailure)
	}
	return nil
}

func writeEvalsTable(w io.Writer, rows []lsRow) {
	multi := multiManifest(rows)
	h := []string{"label", "round", "pooled %", "after FT", "client mean %", "after FT"}
	if multi {
		h = append([]string{"manifest"}, h...)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(h, "\t"))
	evals, runs := 0, 0
	two := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	for _, r := range rows {
		if len(r.Evals) > 0 {
			runs++
		}
		for _, e := range r.Evals {
			c := evalCells(r, e, multi, two)
			for i, v := range c {
				if v == "" {
					c[i] = "-"
				}
			}
			fmt.Fprintln(tw, strings.Join(c, "\t"))
			evals++
		}
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "%d evaluations of %d cached runs (%d runs listed)\n", evals, runs, len(rows))
}
