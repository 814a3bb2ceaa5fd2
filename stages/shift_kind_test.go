package stages

import (
	"math"
	"testing"

	"github.com/fedpipe/fedpipe/results"
)

// Shift summaries follow the order the shifts ran, summarize each (shift, level) over its
// clients and total the CIFAR-10-C counts.
func TestShiftSummaries(t *testing.T) {
	row := func(kind string, level float64, c, n int, acc float64, own, drawn int) results.ShiftClient {
		return results.ShiftClient{Shift: kind, Level: level, Client: results.Client{Client: c, Samples: n, Accuracy: acc}, Own: own, Drawn: drawn}
	}
	got := shiftSummaries([]results.ShiftClient{
		row("degree", 0.5, 0, 10, 0.5, 0, 0), row("cifar10c:fog", 1, 0, 10, 0.2, 2, 8),
		row("degree", 0.5, 1, 30, 0.9, 0, 0), row("cifar10c:fog", 1, 1, 30, 0.4, 5, 25)})
	want := []results.ShiftSummary{{Shift: "degree", Level: 0.5, Mean: 0.7, Std: 0.2, Pooled: 0.8},
		{Shift: "cifar10c:fog", Level: 1, Mean: 0.30000000000000004, Std: 0.1, Pooled: 0.35, Own: 7, Drawn: 33}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Shift != w.Shift || g.Level != w.Level || g.Own != w.Own || g.Drawn != w.Drawn ||
			math.Abs(g.Mean-w.Mean) > 1e-12 || math.Abs(g.Std-w.Std) > 1e-12 || math.Abs(g.Pooled-w.Pooled) > 1e-12 {
			t.Errorf("summary %d = %+v, want %+v", i, g, w)
		}
	}
}
