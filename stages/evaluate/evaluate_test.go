package evaluate

import (
	"math"
	"testing"
)

func TestSummarizeMeanStdAndPooled(t *testing.T) {
	rows := []Client{
		{Client: 0, Samples: 10, Accuracy: 0.9, Loss: 0.2},
		{Client: 1, Samples: 30, Accuracy: 0.5, Loss: 1.0},
		{Client: 2, Samples: 0}, // no test data: left out
	}
	s := Summarize(rows)
	if s.Clients != 2 || s.TestSamples != 40 {
		t.Fatalf("counts: %+v", s)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if !near(s.Mean, 0.7) || !near(s.Std, 0.2) {
		t.Errorf("mean ± std = %v ± %v, want 0.7 ± 0.2", s.Mean, s.Std)
	}
	if !near(s.Pooled, (9.0+15.0)/40) {
		t.Errorf("pooled = %v, want %v", s.Pooled, 24.0/40)
	}
	if !near(s.MeanLoss, (2.0+30.0)/40) {
		t.Errorf("pooled loss = %v", s.MeanLoss)
	}
}

type row struct {
	round int
	c     Client
}

func (r row) TestRow() (int, Client, bool) { return r.round, r.c, true }

func TestBestOf(t *testing.T) {
	h := []row{
		{1, Client{Samples: 10, Accuracy: 0.5}}, {1, Client{Samples: 30, Accuracy: 0.9}}, // mean .7, pooled .8
		{2, Client{Samples: 10, Accuracy: 0.9}}, {2, Client{Samples: 30, Accuracy: 0.6}}, // mean .75, pooled .675
	}
	b := BestOf(h)
	if b.MeanRound != 2 || b.PooledRound != 1 || math.Abs(b.Pooled-0.8) > 1e-12 || math.Abs(b.Mean-0.75) > 1e-12 {
		t.Errorf("best = %+v", b)
	}
}
