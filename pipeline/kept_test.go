package pipeline

import (
	"strconv"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
)

func keptGraph(t *testing.T, backend string) *Graph {
	t.Helper()
	m, err := manifest.ParseManifest("m.yaml", []byte(`name: kept
dataset: {name: synthetic, devices: 6}
partition: {scheme: natural}
methods: [{name: fedavg}]
`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Build(m, BuildOptions{Backend: backend, Describe: func(manifest.DatasetSpec) (*manifest.DataDesc, error) {
		return &manifest.DataDesc{Digest: "d", Shape: []int{60}, Classes: 10, Samples: 1000}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func keptNodeOf(g *Graph, kind string) *Node {
	for _, n := range g.Nodes {
		if n.Kind == kind {
			return n
		}
	}
	return nil
}

// A kept result is current while its key is; after a train code-version bump (or another
// backend) the kept evaluation is stale, and the reason names the stage and what changed.
func TestKeptStaleNamesWhatChanged(t *testing.T) {
	dir := t.TempDir()
	g := keptGraph(t, "cpu-a")
	for _, n := range g.Nodes {
		if err := RecordKept(dir, g, n); err != nil {
			t.Fatal(err)
		}
	}
	if why, _, ok := KeptStale(dir, g)(keptNodeOf(g, manifest.KindEvaluate)); ok {
		t.Fatalf("current result called stale: %s", why)
	}
	old := CodeVersions[manifest.KindTrain]
	CodeVersions[manifest.KindTrain] = old + 1
	defer func() { CodeVersions[manifest.KindTrain] = old }()
	g2 := keptGraph(t, "cpu-a")
	why, oldKey, ok := KeptStale(dir, g2)(keptNodeOf(g2, manifest.KindEvaluate))
	if kept := artifacts.Digest(keptNodeOf(g, manifest.KindEvaluate).Key); oldKey != kept {
		t.Errorf("stale result's key %s, want the kept one %s", oldKey, kept)
	}
	want := "train: stage code version " + itoa(old) + " → " + itoa(old+1)
	if !ok || !strings.Contains(why, want) || !strings.Contains(why, "(2 of 3 stage keys changed)") {
		t.Errorf("stale = %v, %q; want it to contain %q and 2 of 3 keys", ok, why, want)
	}
	if strings.Contains(why, "partition") {
		t.Errorf("the partition did not change: %q", why)
	}
	CodeVersions[manifest.KindTrain] = old
	g3 := keptGraph(t, "cpu-b")
	why, _, ok = KeptStale(dir, g3)(keptNodeOf(g3, manifest.KindEvaluate))
	if !ok || !strings.Contains(why, `train: backend "cpu-a" → "cpu-b"`) {
		t.Errorf("another backend: stale = %v, %q", ok, why)
	}
	// A stage never kept is not stale: it is not computed.
	if _, _, ok := KeptStale(t.TempDir(), g)(keptNodeOf(g, manifest.KindEvaluate)); ok {
		t.Error("a stage with no kept entry is stale")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// A kept result is not replaced in the index by one of another backend (KeptConflict names
// both), but is by one of the same backend made by other code, and a partition, which names
// no backend, never conflicts.
func TestKeptConflictRefusesAnotherBackend(t *testing.T) {
	dir := t.TempDir()
	fast := "gomlx@v0.26.0/fpfast@1+gemm-avx2fma+fpcpu@1/fpgraph-4/float32"
	g := keptGraph(t, fast)
	for _, n := range g.Nodes {
		if err := RecordKept(dir, g, n); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		backend  string
		conflict bool
	}{
		{fast, false},
		{"gomlx@v0.26.0/fpfast@2+gemm-generic+fpcpu@1/fpgraph-5/float32", false}, // other versions, same backend
		{"gomlx@v0.26.0/xla-cuda@jax-cuda13-pjrt-0.11.2-43d3efd6fd43d8a5+lockstep-3/fpgraph-4/float32", true},
		{"gomlx@v0.26.0/fpcpu@1/fpgraph-4/float32", true},
	} {
		g2 := keptGraph(t, c.backend)
		for _, kind := range []string{manifest.KindPartition, manifest.KindTrain, manifest.KindEvaluate} {
			why, err := KeptConflict(dir, g2, keptNodeOf(g2, kind))
			want := c.conflict && kind != manifest.KindPartition
			if err != nil || (why != "") != want {
				t.Errorf("%s %s: conflict %q, %v; want one: %v", c.backend, kind, why, err, want)
			}
			if want && (!strings.Contains(why, "made on fpfast") || !strings.Contains(why, "made on "+backendFamily([]byte(`{"backend":"`+c.backend+`"}`)))) {
				t.Errorf("%s %s: %q names not both backends", c.backend, kind, why)
			}
		}
	}
	if why, err := KeptConflict(t.TempDir(), g, keptNodeOf(g, manifest.KindTrain)); why != "" || err != nil {
		t.Errorf("nothing kept: conflict %q, %v", why, err)
	}
}
