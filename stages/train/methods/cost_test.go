package methods

import (
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// TestEveryMethodDeclaresItsCost: `fedpipe bench --methods` prints each method's implied
// multiple from its registration, and the queue's plan projects from it.
func TestEveryMethodDeclaresItsCost(t *testing.T) {
	for _, name := range manifest.MethodNames() {
		c, ok := manifest.MethodCost(name, 5, nil)
		if !ok {
			if name == "myditto" { // docs/adding-a-method.md's example
				continue
			}
			t.Errorf("method %s declares no Cost (manifest.MethodDef.Cost)", name)
			continue
		}
		if c.Multiple < 1 || c.Why == "" {
			t.Errorf("method %s: implied cost %v: a round does at least FedAvg's work, and says how it was counted", name, c)
		}
	}
	if c, _ := manifest.MethodCost("feddpa", 5, nil); c.Multiple != 1.2 {
		t.Errorf("FedDPA with 5 epochs implies 1 + 1/5, got %v", c.Multiple)
	}
	// APFL's FL-bench variant adds a training-mode forward pass (a third) to its two trainings.
	if c, _ := manifest.MethodCost("apfl", 5, map[string]string{"impl": "flbench"}); c.Multiple != 2+1.0/3 {
		t.Errorf("APFL impl flbench implies 2 1/3, got %v", c.Multiple)
	}
	if c, _ := manifest.MethodCost("apfl", 5, map[string]string{"impl": "paper"}); c.Multiple != 2 {
		t.Errorf("APFL impl paper implies 2, got %v", c.Multiple)
	}
	if c, _ := manifest.MethodCost("fedavg", 5, nil); c.Multiple != 1 {
		t.Errorf("FedAvg is the reference, got %v", c.Multiple)
	}
}
