package verify

import (
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
