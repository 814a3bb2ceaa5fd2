package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		in   string
		i, n int
		ok   bool
	}{
		{"0/1", 0, 1, true}, {"3/4", 3, 4, true}, {"4/4", 0, 0, false}, {"-1/4", 0, 0, false},
		{"1/0", 0, 0, false}, {"1", 0, 0, false}, {"a/b", 0, 0, false}, {"", 0, 0, false},
	} {
		i, n, err := ParseShard(c.in)
		if (err == nil) != c.ok || i != c.i || n != c.n {
			t.Errorf("ParseShard(%q) = %d, %d, %v", c.in, i, n, err)
		}
	}
}

// Train stages are dealt to shards round-robin in plan order; each evaluate stage follows
// its train stage; partitions and the report belong to no shard.
func TestShardOwnersFollowTrainStages(t *testing.T) {
	src := "name: s\nseeds: [0, 1]\ndataset: {name: synthetic}\nmodel: {arch: logreg}\nmethods: [{name: fedavg}, {name: local}, {name: fedprox}]\n"
	m, err := manifest.ParseManifest("s.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Build(m, BuildOptions{Backend: "cpu", Describe: func(manifest.DatasetSpec) (*manifest.DataDesc, error) {
		return &manifest.DataDesc{Digest: "d", Shape: []int{60}, Classes: 10, Samples: 100}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	plan := make([]PlanEntry, len(g.Nodes))
	for i, n := range g.Nodes {
		plan[i] = PlanEntry{Node: n, State: StateRun}
	}
	owner := shardOwners(plan, 4)
	perShard := map[int]int{}
	trains := 0
	for _, p := range plan {
		n := p.Node
		o, ok := owner[n]
		switch n.Kind {
		case manifest.KindTrain:
			if !ok || o != trains%4 {
				t.Errorf("%s: shard %d (%v), want %d", n.Name, o, ok, trains%4)
			}
			perShard[o]++
			trains++
		case manifest.KindEvaluate:
			if to, tok := owner[n.Inputs[0]]; !ok || !tok || o != to {
				t.Errorf("%s: shard %d, its train stage's %d", n.Name, o, to)
			}
		default:
			if ok {
				t.Errorf("%s (%s) belongs to shard %d, want none", n.Name, n.Kind, o)
			}
		}
	}
	if trains != 6 || perShard[0] != 2 || perShard[1] != 2 || perShard[2] != 1 || perShard[3] != 1 {
		t.Errorf("%d train stages dealt %v", trains, perShard)
	}
	if leased(plan[0].Node) || !leased(g.Nodes[1]) {
		t.Errorf("partitions are leased, or train stages are not")
	}
}

// A split run needs a remote.
func TestSplitWithoutRemoteFails(t *testing.T) {
	e := &Executor{Split: &Split{Worker: true}}
	_, err := e.Execute(context.Background(), &Graph{}, nil)
	if err == nil || !strings.Contains(err.Error(), "need a remote") {
		t.Fatalf("err = %v", err)
	}
}
