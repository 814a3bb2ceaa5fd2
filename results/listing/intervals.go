package listing

import (
	"errors"
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/results/summary"
)

// IntervalsOf computes a run's test-set intervals from its summary and clients table
// (nil: not read).
func IntervalsOf(s results.Summary, clients []results.Client) Intervals {
	var out Intervals
	if iv, _, ok := summary.TestSetInterval(s, nil, "final_pooled"); ok {
		out.Pooled = &iv
	}
	if iv, _, ok := summary.TestSetInterval(s, summary.ClientAccuracies(clients), "final_client_mean"); ok {
		out.ClientMean = &iv
	}
	return out
}

// CachedIntervals reads the clients table of the cached evaluate stage with key (hex) and
// computes the run's test-set intervals; it is the IntervalsFunc ls, diff and export use.
func CachedIntervals(store *artifacts.Store, key string, s results.Summary) (Intervals, error) {
	clients, _, err := Clients(store, key)
	if err != nil {
		return Intervals{}, err
	}
	return IntervalsOf(s, clients), nil
}

// Clients reads the per-client table of the evaluate stage with key (hex); ok is false
// when the stage or its table is not in the store.
func Clients(store *artifacts.Store, key string) ([]results.Client, bool, error) {
	d, err := artifacts.ParseDigest(key)
	if err != nil {
		return nil, false, nil
	}
	rows, _, err := results.Read[results.Client](store, d, results.OutEvaluateClients)
	if results.Missing(err) {
		return nil, false, nil // a missing or corrupt blob is a miss, as everywhere in fedpipe
	}
	if err != nil && !errors.Is(err, results.ErrDecode) {
		return nil, false, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("evaluate %s: clients: %w", key[:12], err)
	}
	return rows, true, nil
}
