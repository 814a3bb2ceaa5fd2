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
