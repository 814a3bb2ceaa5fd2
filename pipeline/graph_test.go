package pipeline

import (
	"slices"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// TestNodesNameTheirInputs checks that every stage's inputs are laid out as InputKinds
// says (the order its key hashes them), that Input and InputsOf find them by kind, and
// that the key hashes the inputs in that order.
func TestNodesNameTheirInputs(t *testing.T) {
	g := syntheticGraph(t, "name: k\ndataset: {name: synthetic}\nmodel: {arch: mlp}\nmethods: [{name: fedavg}, {name: local}]\nseeds: [0, 1]\nshift: {degrees: [0]}\n")
	counts := map[string]int{}
	for _, n := range g.Nodes {
		counts[n.Kind]++
		order := InputKinds[n.Kind]
		last := -1
		for _, in := range n.Inputs {
			i := slices.Index(order, in.Kind)
			if i < last {
				t.Errorf("%s: input %s (%s) out of InputKinds order %v", n.Name, in.Name, in.Kind, order)
			}
			last = i
		}
		if len(n.Inputs) == 0 {
			continue
		}
		var keys []Key
		for _, in := range n.Inputs {
			keys = append(keys, in.Key)
		}
		if k, _, err := computeKey(n.Kind, n.Params, keys, n.Backend); err != nil || k != n.Key {
			t.Errorf("%s: key %s, recomputed from its inputs in order %s (%v)", n.Name, n.Key, k, err)
		}
	}
	if counts[manifest.KindShift] != 4 || counts[manifest.KindEvaluate] != 4 {
		t.Fatalf("graph has %v stages of each kind, want 4 evaluate and 4 shift", counts)
	}
	for _, n := range g.Nodes {
		switch n.Kind {
		case manifest.KindPartition:
			if n.Input(manifest.KindTrain) != nil || len(n.Inputs) != 0 {
				t.Errorf("%s has inputs", n.Name)
			}
		case manifest.KindTrain:
			if p := n.Input(manifest.KindPartition); p == nil || p.Kind != manifest.KindPartition || p.Run.PartitionSeed() != n.Run.PartitionSeed() {
				t.Errorf("%s: partition input %v", n.Name, p)
			}
		case manifest.KindEvaluate, manifest.KindShift:
			tr, p := n.Input(manifest.KindTrain), n.Input(manifest.KindPartition)
			if tr == nil || tr.Name != "train "+n.Run.Label() || p == nil || p != tr.Input(manifest.KindPartition) {
				t.Errorf("%s: train input %v, partition input %v", n.Name, tr, p)
			}
			if !slices.Equal(n.Inputs, []*Node{tr, p}) {
				t.Errorf("%s: inputs not [train, partition]", n.Name)
			}
		case manifest.KindReport:
			evals, shifts := n.InputsOf(manifest.KindEvaluate), n.InputsOf(manifest.KindShift)
			if len(evals) != len(n.Runs) || len(shifts) != 4 || !slices.Equal(n.Inputs, append(slices.Clone(evals), shifts...)) {
				t.Errorf("report: %d evaluations for %d runs, %d shifts, of %d inputs", len(evals), len(n.Runs), len(shifts), len(n.Inputs))
			}
			for i, e := range evals {
				if e.Run.Label() != n.Runs[i].Label() {
					t.Errorf("report: evaluation %d is %s, run %s", i, e.Name, n.Runs[i].Label())
				}
			}
		}
	}
}
