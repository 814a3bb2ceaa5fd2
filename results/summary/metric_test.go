package summary

import (
	"math"
	"testing"

	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stats"
)

// Each metric gets its own test-set interval: Wilson for pooled accuracies (in percent), the
// bootstrap over clients for the client mean, none where the data to compute it are not kept.
func TestTestSetInterval(t *testing.T) {
	s := results.Summary{Clients: 2, TestSamples: 10000, Mean: 0.85, Pooled: 0.9053, Best: results.Best{Mean: 0.9, Pooled: 0.7}}
	iv, how, ok := TestSetInterval(s, nil, "final_pooled")
	w := stats.Wilson(9053, 10000)
	if !ok || how != "Wilson, 10000 test samples" || iv.Lo != 100*w.Lo || iv.Hi != 100*w.Hi {
		t.Errorf("final_pooled: %v %q %v", iv, how, ok)
	}
	if iv, _, ok = TestSetInterval(s, nil, "best_pooled"); !ok || iv.Lo != 100*stats.Wilson(7000, 10000).Lo {
		t.Errorf("best_pooled: %v %v", iv, ok)
	}
	iv, how, ok = TestSetInterval(s, []float64{0.8, 0.9}, "final_client_mean")
	if !ok || how != "bootstrap over 2 clients" || iv != (stats.Interval{Lo: 80, Hi: 90}) {
		t.Errorf("final_client_mean: %v %q %v", iv, how, ok)
	}
	for _, m := range []string{"best_client_mean", "final_pooled_ft"} {
		if _, _, ok := TestSetInterval(s, []float64{0.8}, m); ok {
			t.Errorf("%s: an interval from data not kept", m)
		}
	}
	if _, _, ok := TestSetInterval(s, nil, "final_client_mean"); ok {
		t.Errorf("client mean without clients")
	}
	if _, _, ok := TestSetInterval(results.Summary{Pooled: 0.5}, nil, "final_pooled"); ok {
		t.Errorf("no test samples")
	}
}

// Metric names without "_ft" read the figures before fine-tuning, those with it the
// figures after; a run that does not fine-tune has no "_ft" figure.
func TestValueBeforeAndAfterFinetuning(t *testing.T) {
	s := results.Summary{Pooled: 0.5, Mean: 0.4, Best: results.Best{Pooled: 0.88, Mean: 0.8}}
	if v := Value(s, "best_pooled_ft"); !math.IsNaN(v) {
		t.Errorf("best_pooled_ft of a run without fine-tuning = %v, want NaN", v)
	}
	s.FT = results.Finetuned{Has: 1, Pooled: 0.9, Mean: 0.85, BestPooled: 0.97, BestMean: 0.95}
	for metric, want := range map[string]float64{"best_pooled": 88, "best_pooled_ft": 97, "final_pooled": 50,
		"final_pooled_ft": 90, "final_client_mean": 40, "final_client_mean_ft": 85, "best_client_mean_ft": 95} {
		if got := Value(s, metric); math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", metric, got, want)
		}
	}
}
