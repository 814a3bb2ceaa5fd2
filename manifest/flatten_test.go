package manifest

import (
	"testing"
)

// Flatten names every parameter by its dotted path, methods by their name, lists of
// scalars as flow lists, and leaves out what is not a parameter.
func TestFlattenNamesParametersByPath(t *testing.T) {
	got := Flatten([]byte(`name: x
description: not a parameter
seeds: [0, 1]
train: {lr: 0.05}
methods: [{name: fedavg}, {name: fedprox, params: {mu: 0.01}}]
expect: [{method: fedavg, value: 1}]
`))
	want := map[string]string{"name": "x", "seeds": "[0, 1]", "train.lr": "0.05",
		"methods.fedavg.name": "fedavg", "methods.fedprox.name": "fedprox", "methods.fedprox.params.mu": "0.01"}
	if len(got) != len(want) {
		t.Errorf("Flatten = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Flatten[%s] = %q, want %q", k, got[k], v)
		}
	}
	if len(Flatten([]byte("{{"))) != 0 {
		t.Error("YAML that does not parse flattens to something")
	}
}
