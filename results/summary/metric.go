package summary

import (
	"fmt"
	"math"
	"strings"

	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stats"
)

// Value reads one metric (a manifest.Expectation's Metric) from an evaluate summary, in
// percent. A metric ending in "_ft" reads the after-fine-tuning figures, NaN when the run
// did not fine-tune.
func Value(s results.Summary, metric string) float64 {
	if base, ok := strings.CutSuffix(metric, "_ft"); ok {
		if s.FT.Has == 0 {
			return math.NaN()
		}
		return Value(s.FT.AsSummary(), base)
	}
	switch metric {
	case "final_client_mean":
		return 100 * s.Mean
	case "best_client_mean":
		return 100 * s.Best.Mean
	case "best_pooled":
		return 100 * s.Best.Pooled
	}
	return 100 * s.Pooled
}

// BootstrapSeed seeds the bootstrap over clients of every test-set interval fedpipe
// reports. It is a reporting choice, part of no key: changing it changes no stored result.
const BootstrapSeed uint64 = 49

// TestSetInterval is the 95 % test-set sampling interval (percent) of one run's metric: how
// much the number would move with another draw of test samples (pooled metrics: Wilson over
// the pooled test samples) or of clients (client-mean metrics: the percentile bootstrap over
// clients, BootstrapSeed). clients are the run's per-client final accuracies (fractions; nil
// when not read). It says nothing about the spread over training seeds. ok is false where no
// such interval can be computed: a best-round client mean (no per-client table at that
// round), a client mean without clients, an _ft metric of a run without fine-tuning. how names
// the method ("Wilson, 10000 test samples").
func TestSetInterval(s results.Summary, clients []float64, metric string) (iv stats.Interval, how string, ok bool) {
	if strings.HasSuffix(metric, "_ft") && s.FT.Has == 0 {
		return iv, "", false
	}
	switch metric {
	case "final_pooled", "best_pooled", "final_pooled_ft", "best_pooled_ft":
		if s.TestSamples <= 0 {
			return iv, "", false
		}
		iv = stats.PooledInterval(Value(s, metric)/100, s.TestSamples)
		iv.Lo, iv.Hi = 100*iv.Lo, 100*iv.Hi
		return iv, fmt.Sprintf("Wilson, %d test samples", s.TestSamples), iv.Valid()
	case "final_client_mean":
		if len(clients) == 0 {
			return iv, "", false
		}
		pct := make([]float64, len(clients))
		for i, c := range clients {
			pct[i] = 100 * c
		}
		iv = stats.BootstrapMean(pct, BootstrapSeed)
		return iv, fmt.Sprintf("bootstrap over %d clients", len(clients)), iv.Valid()
	}
	return iv, "", false
}

// ClientAccuracies lists the accuracy (fraction) of each row of an evaluate stage's clients
// table, in order.
func ClientAccuracies(rows []results.Client) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = r.Accuracy
	}
	return out
}
