package pipeline

import (
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// Two training seeds under one partition.seed plan one partition stage, keyed as a run of
// that seed without partition.seed would be; without it each seed has its own.
func TestPartitionSeedSharesThePartitionStage(t *testing.T) {
	keys := func(src string) (part, train map[Key]bool) {
		t.Helper()
		g := describedGraph(t, src, manifest.DataDesc{Digest: "d", Shape: []int{28, 28, 1}, Classes: 10, Samples: 1000})
		part, train = map[Key]bool{}, map[Key]bool{}
		for _, n := range g.Nodes {
			switch n.Kind {
			case manifest.KindPartition:
				part[n.Key] = true
			case manifest.KindTrain:
				train[n.Key] = true
			}
		}
		return part, train
	}
	const head = "name: t\ndataset: {name: fmnist}\nmethods: [{name: fedavg}]\n"
	shared, train := keys(head + "seeds: [0, 1]\npartition: {clients: 4, seed: 42}\n")
	if len(shared) != 1 || len(train) != 2 {
		t.Fatalf("seeds 0 and 1 with partition.seed 42: %d partition and %d train keys, want 1 and 2", len(shared), len(train))
	}
	own, _ := keys(head + "seeds: [42]\npartition: {clients: 4}\n")
	for k := range own {
		if !shared[k] {
			t.Error("partition.seed 42 keys its partition otherwise than a run of seed 42")
		}
	}
	if apart, _ := keys(head + "seeds: [0, 1]\npartition: {clients: 4}\n"); len(apart) != 2 {
		t.Errorf("seeds 0 and 1 without partition.seed: %d partition keys, want 2", len(apart))
	}
}
