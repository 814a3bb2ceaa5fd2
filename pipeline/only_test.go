package pipeline

import (
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// --only keeps the named labels' stages and their inputs with the same keys, drops the
// report and the other labels, and refuses a label the manifest lacks.
func TestOnlyKeepsTheNamedRuns(t *testing.T) {
	g := onlyGraph(t, "m.yaml", "[0, 1]", "[{name: fedavg}, {name: local}, {name: fedprox}]")
	o, err := Only(g, []string{"local"})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, n := range o.Nodes {
		kinds[n.Kind]++
		if n.Run != nil && n.Kind != manifest.KindPartition && n.Run.MethodName != "local" {
			t.Errorf("kept %s", n.Name)
		}
	}
	if kinds[manifest.KindPartition] != 2 || kinds[manifest.KindTrain] != 2 || kinds[manifest.KindEvaluate] != 2 || kinds[manifest.KindReport] != 0 {
		t.Errorf("kept %v; want 2 partitions, 2 trains, 2 evaluations, no report", kinds)
	}
	same := map[Key]bool{}
	for _, n := range g.Nodes {
		same[n.Key] = true
	}
	for _, n := range o.Nodes {
		if !same[n.Key] {
			t.Errorf("%s: key changed", n.Name)
		}
	}
	if _, err := Only(g, []string{"ghost"}); err == nil || !manifest.IsInvalid(err) {
		t.Errorf("unknown label: err %v, want an input error", err)
	}
}

// onlyGraph builds the graph of a synthetic manifest of the given seeds and methods, named
// file.
func onlyGraph(t *testing.T, file, seeds, methods string) *Graph {
	t.Helper()
	m, err := manifest.ParseManifest(file, []byte(`name: `+file+`
seeds: `+seeds+`
dataset: {name: synthetic, devices: 6}
partition: {scheme: natural}
methods: `+methods+`
`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Build(m, BuildOptions{Backend: "test", Describe: func(manifest.DatasetSpec) (*manifest.DataDesc, error) {
		return &manifest.DataDesc{Digest: "d", Shape: []int{60}, Classes: 10, Samples: 1000}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Over several manifests, --only keeps those with a named label and leaves the others out;
// a label none has is an error naming the files.
func TestOnlyGraphsLeavesOutManifestsWithoutTheLabels(t *testing.T) {
	a, b := onlyGraph(t, "a.yaml", "[0]", "[{name: fedavg}, {name: local}]"), onlyGraph(t, "b.yaml", "[0]", "[{name: fedprox}]")
	got, err := OnlyGraphs([]*Graph{a, b}, []string{" local"})
	if err != nil || len(got) != 1 || got[0].Manifest.File != "a.yaml" {
		t.Fatalf("OnlyGraphs(local) = %d graphs, %v; want a.yaml's", len(got), err)
	}
	if all, err := OnlyGraphs([]*Graph{a, b}, nil); err != nil || len(all) != 2 {
		t.Errorf("no labels: %d graphs, %v; want both", len(all), err)
	}
	if _, err := OnlyGraphs([]*Graph{a, b}, []string{"ditto"}); err == nil || !strings.Contains(err.Error(), "a.yaml, b.yaml") {
		t.Errorf("an unknown label: %v, want an error naming both files", err)
	}
}
