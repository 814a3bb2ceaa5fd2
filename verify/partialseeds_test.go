package verify

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
)

// keepSummary stores an evaluate stage's result whose pooled accuracy is pooled.
func keepSummary(t *testing.T, store *artifacts.Store, n *pipeline.Node, pooled float64) {
	t.Helper()
	b, err := results.Encode([]results.Summary{{Pooled: pooled}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := store.Put(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutAction(artifacts.Digest(n.Key), artifacts.Action{Outputs: map[string]artifacts.Digest{"summary": d}}); err != nil {
		t.Fatal(err)
	}
}

// Kept paper-scale results come seed by seed: with PartialSeeds a cell is measured over
// the seeds present (and says how many of how many); without, it is not computed. A cell
// none of whose seeds is current but one of which has an out-of-date kept result is
// stale, with the reason the Stale callback gives.
func TestPartialSeedsAndStale(t *testing.T) {
	g := buildGraph(t, `name: t
seeds: [0, 1, 2]
dataset: {name: synthetic, devices: 6}
partition: {scheme: natural}
methods: [{name: fedavg}, {name: local}]
expect:
  - {method: fedavg, metric: final_pooled, published: 50, tolerance: 1}
  - {method: local, metric: final_pooled, published: 50, tolerance: 1}
`)
	store, err := artifacts.Open(filepath.Join(t.TempDir(), "s"), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var fedavg []*pipeline.Node
	var localSeed1 *pipeline.Node
	for _, n := range g.Nodes {
		if n.Kind != manifest.KindEvaluate {
			continue
		}
		switch {
		case n.Run.MethodName == "fedavg":
			fedavg = append(fedavg, n)
		case n.Run.Seed == 1:
			localSeed1 = n
		}
	}
	if len(fedavg) != 3 || localSeed1 == nil {
		t.Fatalf("graph: %d fedavg evaluations, local seed 1 %v", len(fedavg), localSeed1)
	}
	keepSummary(t, store, fedavg[0], 0.505)
	keepSummary(t, store, fedavg[2], 0.515) // mean 51.0: 1.0 above, within tolerance

	cells, err := Verify(g, store)
	if err != nil {
		t.Fatal(err)
	}
	if cells[0].Verdict != Missing {
		t.Errorf("all seeds required: fedavg %s, want %s", cells[0].Verdict, Missing)
	}
	// The stale kept result of local's seed 1 is held under its old key (here: its partition
	// stage's, which Verify never reads for an evaluation figure).
	oldKey := artifacts.Digest(localSeed1.Input(manifest.KindPartition).Key)
	keepSummary(t, store, localSeed1.Input(manifest.KindPartition), 0.42)
	stale := func(n *pipeline.Node) (string, artifacts.Digest, bool) {
		if n == localSeed1 {
			return "train: code 6 → 7", oldKey, true
		}
		return "", artifacts.Digest{}, false
	}
	cells, err = VerifyWith(g, store, Options{PartialSeeds: true, Stale: stale})
	if err != nil {
		t.Fatal(err)
	}
	fa, lo := cells[0], cells[1]
	if fa.Verdict != Pass || fa.Seeds != 2 || fa.SeedsOf != 3 || len(fa.Nodes) != 2 {
		t.Errorf("fedavg %+v: want pass over 2 of 3 seeds", fa)
	}
	if d := fa.Measured - 51; d > 1e-9 || d < -1e-9 {
		t.Errorf("fedavg measured %v, want 51 (mean of 50.5 and 51.5)", fa.Measured)
	}
	if !strings.Contains(fa.Row()[4], "(2 of 3 seeds)") {
		t.Errorf("row %q does not say 2 of 3 seeds", fa.Row()[4])
	}
	if lo.Verdict != Stale || lo.StaleWhy != "train: code 6 → 7" {
		t.Errorf("local %+v: want stale with the reason", lo)
	}
	if lo.Row()[4] != "—" {
		t.Errorf("a stale cell shows no measurement, got %q", lo.Row()[4])
	}
	// What the stale result measured is reported beside the reason, never as the cell's.
	if lo.StaleSeeds != 1 || lo.StaleMeasured != 42 || lo.Measured != 0 {
		t.Errorf("local: stale figure %v over %d seeds, measured %v; want 42 over 1, none measured", lo.StaleMeasured, lo.StaleSeeds, lo.Measured)
	}
}

// A failing cell whose expectation records a deviation says so (and is counted apart from
// the cells that differ unexplained); a passing one ignores it.
func TestKnownDeviation(t *testing.T) {
	g := buildGraph(t, `name: t
dataset: {name: synthetic, devices: 6}
partition: {scheme: natural}
methods: [{name: fedavg}, {name: local}]
expect:
  - {method: fedavg, metric: final_pooled, published: 40, tolerance: 1, deviation: "the partition is another draw"}
  - {method: local, metric: final_pooled, published: 50, tolerance: 1, deviation: "unused"}
`)
	store, err := artifacts.Open(filepath.Join(t.TempDir(), "s"), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, n := range g.Nodes {
		if n.Kind == manifest.KindEvaluate {
			keepSummary(t, store, n, 0.5)
		}
	}
	cells, err := Verify(g, store)
	if err != nil {
		t.Fatal(err)
	}
	if cells[0].Verdict != Fail || cells[0].Known != "the partition is another draw" || cells[0].Row()[6] != "fail (known deviation)" {
		t.Errorf("fedavg %+v", cells[0])
	}
	if cells[1].Verdict != Pass || cells[1].Known != "" {
		t.Errorf("local %+v: a passing cell carries no deviation", cells[1])
	}
}
