package verify

import (
	"path/filepath"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
)

func buildGraph(t *testing.T, src string) *pipeline.Graph {
	t.Helper()
	m, err := manifest.ParseManifest("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	g, err := pipeline.Build(m, pipeline.BuildOptions{Backend: "test", Describe: func(ds manifest.DatasetSpec) (*manifest.DataDesc, error) {
		return &manifest.DataDesc{Digest: "d", Shape: []int{60}, Classes: 10, Samples: 1000}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Two labels with identical settings share one evaluate stage; each expectation still
// gets its cell. An expectation matching no run is a cell "not computed" (exit 3 in the
// CLI), never silently absent.
func TestEveryExpectationGetsACell(t *testing.T) {
	g := buildGraph(t, `name: t
dataset: {name: synthetic, devices: 6}
partition: {scheme: natural}
methods: [{name: x, method: fedavg}, {name: y, method: fedavg}]
expect:
  - {method: x, metric: final_pooled, published: 50}
  - {method: y, metric: final_pooled, published: 50}
`)
	evals := 0
	for _, n := range g.Nodes {
		if n.Kind == manifest.KindEvaluate {
			evals++
			if len(n.RunsOf()) != 2 {
				t.Errorf("shared stage serves %d runs, want 2", len(n.RunsOf()))
			}
		}
		if n.Kind == manifest.KindReport && len(n.Runs) != 2 {
			t.Errorf("report covers %d runs, want 2", len(n.Runs))
		}
	}
	if evals != 1 {
		t.Errorf("%d evaluate stages, want 1 shared", evals)
	}
	g.Manifest.Expect = append(g.Manifest.Expect, manifest.Expectation{Method: "ghost", Metric: "final_pooled"})
	store, err := artifacts.Open(filepath.Join(t.TempDir(), "s"), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cells, err := Verify(g, store)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 3 || cells[0].Method != "x" || cells[1].Method != "y" || cells[2].Method != "ghost" {
		t.Fatalf("cells %+v", cells)
	}
	for _, c := range cells {
		if c.Verdict != Missing {
			t.Errorf("%s: verdict %s, want %s", c.Method, c.Verdict, Missing)
		}
	}
}
