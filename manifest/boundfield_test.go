package manifest

import (
	"strings"
	"testing"
)

// A per-run bound names where the value was set: the method's own train block, the
// method's grid, the top-level grid, else the field at its section's line.
func TestBoundErrorsNameWhereTheValueWasSet(t *testing.T) {
	const head = "name: t\ndataset: {name: synthetic}\npartition: {scheme: natural}\n"
	for src, want := range map[string]string{
		"methods: [{name: fedavg, train: {rounds: 500000}}]\n":        "m.yaml:4:34: methods[0].train.rounds: 500000 rounds exceed",
		"methods: [{name: fedavg, grid: {train.rounds: [500000]}}]\n": "m.yaml:4:33: methods[0].grid.train.rounds: 500000 rounds exceed",
		"methods: [{name: fedavg}]\ngrid: {train.rounds: [500000]}\n": "m.yaml:5:8: grid.train.rounds: 500000 rounds exceed",
		"methods: [{name: fedavg}]\ntrain: {rounds: 500000}\n":        "m.yaml:5:17: train.rounds: 500000 rounds exceed",
	} {
		_, err := ParseManifest("m.yaml", []byte(head+src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}
