package listing

import (
	"slices"
	"testing"

	"github.com/fedpipe/fedpipe/results"
)

func TestSweptPathsFollowTheLabel(t *testing.T) {
	rows := []Row{
		{Label: "fedavg lr=0.1 rounds=4 seed=0", Params: map[string]string{"train.rounds": "4", "train.lr": "0.1"}},
		{Label: "local alpha=0.5 seed=0", Params: map[string]string{"partition.alpha": "0.5"}},
	}
	if got, want := SweptPaths(rows), []string{"train.lr", "train.rounds", "partition.alpha"}; !slices.Equal(got, want) {
		t.Errorf("SweptPaths = %v, want %v", got, want)
	}
}

func TestCellsAndMetric(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	r := Row{Manifest: "a.yaml", Label: "fedavg seed=1", Method: "fedavg", Seed: 1, Params: map[string]string{"train.lr": "0.1"},
		State: Cached, FinalMean: v(91.234), FinalPooled: v(90), BestMean: v(92), BestPooled: v(93.456)}
	if got, want := Cells(r, []string{"train.lr", "train.rounds"}, true),
		[]string{"a.yaml", "fedavg seed=1", "fedavg", "1", "0.1", "", Cached, "91.23", "90.00", "92.00", "93.46"}; !slices.Equal(got, want) {
		t.Errorf("Cells = %q, want %q", got, want)
	}
	if h := Header([]string{"train.lr"}, false); len(h) != 3+1+5 || h[3] != "train.lr" || h[4] != "state" {
		t.Errorf("Header = %q", h)
	}
	for name, want := range map[string]*float64{"final_client_mean_pct": r.FinalMean, "final_pooled_pct": r.FinalPooled,
		"best_client_mean_pct": r.BestMean, "best_pooled_pct": r.BestPooled} {
		if got := r.Metric(name); got != want {
			t.Errorf("Metric(%s) = %v", name, got)
		}
	}
	if MultiManifest([]Row{r, r}) || !MultiManifest([]Row{r, {Manifest: "b.yaml"}}) {
		t.Error("MultiManifest")
	}
	if got := ProvCells(r); len(got) != len(ProvHeader) || got[0] != "" {
		t.Errorf("ProvCells without provenance = %q", got)
	}
}

func TestEvalsOf(t *testing.T) {
	ms := []results.Metric{
		{Round: 2, Client: 0, Split: "test", Accuracy: 0.5, Samples: 10},
		{Round: 2, Client: 1, Split: "test", Accuracy: 1, Samples: 30},
		{Round: 2, Client: 0, Split: "train", Accuracy: 0.1, Samples: 10},
		{Round: 4, Client: 0, Split: "test", Accuracy: 1, Samples: 10},
		{Round: 4, Client: 1, Split: "test", Accuracy: 1, Samples: 30},
		{Round: 4, Client: 0, Split: results.SplitTestFT, Accuracy: 0, Samples: 10},
		{Round: 4, Client: 1, Split: results.SplitTestFT, Accuracy: 1, Samples: 30},
	}
	got := EvalsOf(ms)
	if len(got) != 2 || got[0].Round != 2 || got[0].Mean != 75 || got[0].Pooled != 87.5 || got[0].MeanFT != nil {
		t.Fatalf("EvalsOf = %+v", got)
	}
	if got[1].MeanFT == nil || *got[1].MeanFT != 50 || *got[1].PooledFT != 75 {
		t.Errorf("round 4 after fine-tuning: %+v", got[1])
	}
	if c := EvalCells(Row{Label: "x"}, got[0], false, func(v float64) string { return "n" }); !slices.Equal(c, []string{"x", "2", "n", "", "n", ""}) {
		t.Errorf("EvalCells = %q", c)
	}
}
