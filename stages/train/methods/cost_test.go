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
		c, ok := manifest.MethodCost(name, 5, nil, nil)
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
	if c, _ := manifest.MethodCost("feddpa", 5, nil, nil); c.Multiple != 1.2 {
		t.Errorf("FedDPA with 5 epochs implies 1 + 1/5, got %v", c.Multiple)
	}
	// APFL's FL-bench variant adds a training-mode forward pass (a third) to its two trainings.
	if c, _ := manifest.MethodCost("apfl", 5, map[string]string{"impl": "flbench"}, nil); c.Multiple != 2+1.0/3 {
		t.Errorf("APFL impl flbench implies 2 1/3, got %v", c.Multiple)
	}
	if c, _ := manifest.MethodCost("apfl", 5, map[string]string{"impl": "paper"}, nil); c.Multiple != 2 {
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
		if got, _ := manifest.MethodCost("fedrep", 5, c.options, c.params); math.Abs(got.Multiple-c.want) > 1e-12 {
			t.Errorf("FedRep %v %v implies %v, want %v", c.options, c.params, got.Multiple, c.want)
		}
	}
	if c, _ := manifest.MethodCost("fedavg", 5, nil, nil); c.Multiple != 1 {
		t.Errorf("FedAvg is the reference, got %v", c.Multiple)
	}
}
