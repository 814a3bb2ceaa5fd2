package summary

import (
	"math"
	"testing"

	"github.com/fedpipe/fedpipe/results"
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

type ftRow struct {
	round int
	c     Client
	ft    bool
}

func (r ftRow) TestRow() (int, Client, bool) { return r.round, r.c, !r.ft }
func (r ftRow) FTRow() (int, Client, bool)   { return r.round, r.c, r.ft }

// Before and after fine-tuning are kept apart: BestOf reads only the rows before,
// BestOfFT only those after, and the summary table carries both.
func TestBeforeAndAfterFinetuning(t *testing.T) {
	h := []ftRow{
		{1, Client{Samples: 10, Accuracy: 0.5}, false}, {1, Client{Samples: 10, Accuracy: 0.9}, true},
		{2, Client{Samples: 10, Accuracy: 0.6}, false}, {2, Client{Samples: 10, Accuracy: 0.8}, true},
	}
	if b := BestOf(h); b.Pooled != 0.6 || b.PooledRound != 2 {
		t.Errorf("best before = %+v", b)
	}
	bft, ok := BestOfFT(h)
	if !ok || bft.Pooled != 0.9 || bft.PooledRound != 1 {
		t.Errorf("best after = %+v, %v", bft, ok)
	}
	if _, ok := BestOfFT(h[:0]); ok {
		t.Error("BestOfFT found rows after fine-tuning in an empty history")
	}
	s := Summarize([]Client{{Samples: 10, Accuracy: 0.6}})
	s.Best = BestOf(h)
	WithFT(&s, []Client{{Samples: 10, Accuracy: 0.8}}, bft)
	b, err := results.Encode([]Summary{s}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := results.DecodeOne[Summary](b)
	if err != nil {
		t.Fatal(err)
	}
	if got != s || got.FT.Pooled != 0.8 || got.FT.BestPooled != 0.9 {
		t.Errorf("round trip: %+v, want %+v", got, s)
	}
	plain := Summarize([]Client{{Samples: 10, Accuracy: 0.6}})
	if b, err = results.Encode([]Summary{plain}, nil, results.FinetunedColumns...); err != nil {
		t.Fatal(err)
	}
	if got, _, err := results.DecodeOne[Summary](b); err != nil || got.FT.Has != 0 {
		t.Errorf("a run without fine-tuning decodes with FT %+v (%v)", got.FT, err)
	}
}
