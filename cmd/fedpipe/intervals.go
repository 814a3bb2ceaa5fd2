package main

import (
	"math"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stats"
	"github.com/fedpipe/fedpipe/verify"
)

// intervalsOf computes a run's test-set intervals from its summary and clients table
// (nil: not read).
func intervalsOf(s results.Summary, clients []results.Client) runIntervals {
	var out runIntervals
	if iv, _, ok := verify.TestSetInterval(s, nil, "final_pooled"); ok {
		out.Pooled = &iv
	}
	if iv, _, ok := verify.TestSetInterval(s, verify.ClientAccuracies(clients), "final_client_mean"); ok {
		out.ClientMean = &iv
	}
	return out
}

// cachedIntervals reads the clients table of the cached evaluate stage with key (hex) and
// computes the run's test-set intervals.
func cachedIntervals(store *artifacts.Store, key string, s results.Summary) (runIntervals, error) {
	clients, _, err := runClients(store, key)
	if err != nil {
		return runIntervals{}, err
	}
	return intervalsOf(s, clients), nil
}

// withIntervals adds an evaluate stage's summary table (export) the run's test-set
// intervals as columns, in percent; it reports whether it added any.
func withIntervals(t *table.Table, n *pipeline.Node, output string, store *artifacts.Store) (bool, error) {
	if n.Kind != manifest.KindEvaluate || output != results.OutEvaluateSummary || t.NumRows() != 1 || t.Col(lsIntervalHeader[0]) != nil {
		return false, nil
	}
	rows, err := results.FromTable[results.Summary](t)
	if err != nil || len(rows) != 1 {
		return false, nil
	}
	ivs, err := cachedIntervals(store, n.Key.String(), rows[0])
	if err != nil {
		return false, err
	}
	for i, iv := range []*stats.Interval{ivs.Pooled, ivs.Pooled, ivs.ClientMean, ivs.ClientMean} {
		v := math.NaN() // an empty CSV field, as everywhere a value is missing
		if iv != nil {
			v = iv.Lo
			if i%2 == 1 {
				v = iv.Hi
			}
		}
		t.Columns = append(t.Columns, table.Float64Col(lsIntervalHeader[i], []float64{v}))
	}
	return true, nil
}
