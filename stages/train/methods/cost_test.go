package methods

import (
	"math"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// TestEveryMethodDeclaresItsCost: `fedpipe bench --methods` prints each method's implied
// multiple from its registration, and the queue's plan projects from it.
func TestEveryMethodDeclaresItsCost(t *testing.T) {
	for _, name := range manifest.MethodNames() {
		c, ok := manifest.MethodCost(name, manifest.CostOf{Epochs: 5})
		if !ok {
			if name == "myditto" { // docs/adding-a-method.md's example
				continue
			}
			t.Errorf("method %s declares no Cost (manifest.MethodDef.Cost)", name)
			continue
		}
		if c.Multiple <= 0 || c.Why == "" {
			t.Errorf("method %s: implied cost %v: a round does some work, and says how it was counted", name, c)
		}
		if c.Multiple < 1 && name != "fedrep" { // FL-bench's FedRep trains the head alone most epochs
			t.Errorf("method %s: implied cost %v below FedAvg's", name, c)
		}
	}
	if c, _ := manifest.MethodCost("feddpa", manifest.CostOf{Epochs: 5}); c.Multiple != 1.2 {
		t.Errorf("FedDPA with 5 epochs implies 1 + 1/5, got %v", c.Multiple)
	}
	// APFL's FL-bench variant adds a training-mode forward pass (a third) to its two trainings.
	if c, _ := manifest.MethodCost("apfl", manifest.CostOf{Epochs: 5, Options: map[string]string{"impl": "flbench"}, Params: nil}); c.Multiple != 2+1.0/3 {
		t.Errorf("APFL impl flbench implies 2 1/3, got %v", c.Multiple)
	}
	if c, _ := manifest.MethodCost("apfl", manifest.CostOf{Epochs: 5, Options: map[string]string{"impl": "paper"}, Params: nil}); c.Multiple != 2 {
		t.Errorf("APFL impl paper implies 2, got %v", c.Multiple)
	}
	// FedRep's head-only epochs are forward passes: the paper's 10 head epochs (the default)
	// and 5 of the body imply 1 + 10/15; DM-PFL's 5 and 5, 1 + 5/15; FL-bench's 4 head and 1
	// body epoch of 5, (1 + 4/3)/5.
	for _, c := range []struct {
		options map[string]string
		params  map[string]float64
		want    float64
	}{
		{nil, nil, 1 + 10.0/15},
		{map[string]string{"impl": "paper"}, map[string]float64{"head_epochs": 5}, 1 + 5.0/15},
		{map[string]string{"impl": "flbench"}, nil, (1 + 4.0/3) / 5},
		{map[string]string{"impl": "flbench"}, map[string]float64{"train_body_epochs": 9}, 1},
	} {
		if got, _ := manifest.MethodCost("fedrep", manifest.CostOf{Epochs: 5, Options: c.options, Params: c.params}); math.Abs(got.Multiple-c.want) > 1e-12 {
			t.Errorf("FedRep %v %v implies %v, want %v", c.options, c.params, got.Multiple, c.want)
		}
	}
	if c, _ := manifest.MethodCost("fedavg", manifest.CostOf{Epochs: 5}); c.Multiple != 1 {
		t.Errorf("FedAvg is the reference, got %v", c.Multiple)
	}
}

// TestFedSelectCostCountsGrownMasks: a FedSelect client trains twice an epoch (LocalAlt)
// only once its mask has grown in an earlier round, so the implied multiple of a round is
// 1 plus the chance that a sampled client trained before; over FedOBP Table 6's 400 rounds
// at participation 0.1 it nears 2, in the bench's rounds 2–3 it is 1.145.
func TestFedSelectCostCountsGrownMasks(t *testing.T) {
	paper := map[string]string{"variant": "paper"}
	for _, tc := range []struct {
		name string
		of   manifest.CostOf
		want float64
	}{
		{"first round", manifest.CostOf{Epochs: 5, Options: paper, Participation: 0.1, From: 1, To: 1}, 1},
		{"bench rounds 2-3", manifest.CostOf{Epochs: 5, Options: paper, Participation: 0.1, From: 2, To: 3}, 1.145},
		{"a cell", manifest.CostOf{Epochs: 5, Options: paper, Participation: 0.1, From: 1, To: 400}, 2 - (1-math.Pow(0.9, 400))/0.1/400},
		{"steady", manifest.CostOf{Epochs: 5, Options: paper}, 2},
		{"official before its first growth", manifest.CostOf{Epochs: 5, Options: map[string]string{"variant": "official"}, Participation: 0.1, From: 1, To: 4}, 1},
		{"official after", manifest.CostOf{Epochs: 5, Options: map[string]string{"variant": "official"}, Participation: 1, From: 5, To: 5}, 2},
		{"fixed layers", manifest.CostOf{Epochs: 5, Options: map[string]string{"fixed_layers": "classifier"}, Participation: 0.1, From: 1, To: 1}, 2},
		{"v1", manifest.CostOf{Epochs: 5, Options: map[string]string{"variant": "v1"}}, (6*5 + 10) / 5.0},
		{"alpha 0", manifest.CostOf{Epochs: 5, Options: paper, Params: map[string]float64{"alpha": 0}}, 1},
	} {
		c, _ := manifest.MethodCost("fedselect", tc.of)
		if math.Abs(c.Multiple-tc.want) > 1e-9 || c.Why == "" {
			t.Errorf("%s: %v, want %v", tc.name, c, tc.want)
		}
	}
}
