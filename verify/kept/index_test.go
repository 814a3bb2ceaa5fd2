package kept

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
)

func keptGraph(t *testing.T, backend string) *pipeline.Graph {
	t.Helper()
	m, err := manifest.ParseManifest("m.yaml", []byte(`name: kept
dataset: {name: synthetic, devices: 6}
partition: {scheme: natural}
methods: [{name: fedavg}]
`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := pipeline.Build(m, pipeline.BuildOptions{Backend: backend, Describe: func(manifest.DatasetSpec) (*manifest.DataDesc, error) {
		return &manifest.DataDesc{Digest: "d", Shape: []int{60}, Classes: 10, Samples: 1000}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func keptNodeOf(g *pipeline.Graph, kind string) *pipeline.Node {
	for _, n := range g.Nodes {
		if n.Kind == kind {
			return n
		}
	}
	return nil
}

// Backend ids as model.BackendID writes them.
const (
	fastID  = "gomlx@v0.26.0/fpfast@1+gemm-avx2fma+fpcpu@1/fpgraph-4/float32"
	fast2ID = "gomlx@v0.26.0/fpfast@1+gemm-avx2fma+fpcpu@1/fpgraph-5/float32" // newer model code
	cpuID   = "gomlx@v0.26.0/fpcpu@1/fpgraph-4/float32"
	xlaID   = "gomlx@v0.26.0/xla-cuda@jax-cuda13-pjrt-0.11.2-43d3efd6fd43d8a5+lockstep-3/fpgraph-4/float32"
	xla4ID  = "gomlx@v0.26.0/xla-cuda@jax-cuda13-pjrt-0.11.2-43d3efd6fd43d8a5+lockstep-4/fpgraph-4/float32"
)

// A kept result is current while its key is; after a train code-version bump (or a new
// version of its backend's code) the kept evaluation is stale, and the reason names the
// stage and what changed. A backend of another family reads its own entries: none kept is
// not stale but not computed.
func TestKeptStaleNamesWhatChanged(t *testing.T) {
	dir := t.TempDir()
	g := keptGraph(t, fastID)
	for _, n := range g.Nodes {
		if err := recordKept(dir, g, n); err != nil {
			t.Fatal(err)
		}
	}
	if why, _, ok := Stale(dir, g)(keptNodeOf(g, manifest.KindEvaluate)); ok {
		t.Fatalf("current result called stale: %s", why)
	}
	old := pipeline.CodeVersions[manifest.KindTrain]
	pipeline.CodeVersions[manifest.KindTrain] = old + 1
	defer func() { pipeline.CodeVersions[manifest.KindTrain] = old }()
	g2 := keptGraph(t, fastID)
	why, oldKey, ok := Stale(dir, g2)(keptNodeOf(g2, manifest.KindEvaluate))
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
	pipeline.CodeVersions[manifest.KindTrain] = old
	g3 := keptGraph(t, fast2ID)
	why, _, ok = Stale(dir, g3)(keptNodeOf(g3, manifest.KindEvaluate))
	if !ok || !strings.Contains(why, `train: backend "`+fastID+`" → "`+fast2ID+`"`) {
		t.Errorf("the backend's code changed: stale = %v, %q", ok, why)
	}
	g4 := keptGraph(t, cpuID)
	if why, _, ok := Stale(dir, g4)(keptNodeOf(g4, manifest.KindEvaluate)); ok {
		t.Errorf("fpfast's kept result makes fpcpu's cell stale: %q", why)
	}
	// A stage never kept is not stale: it is not computed.
	if _, _, ok := Stale(t.TempDir(), g)(keptNodeOf(g, manifest.KindEvaluate)); ok {
		t.Error("a stage with no kept entry is stale")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// The index keeps one result per stage and backend family: a result of another backend is
// recorded beside the reference one (fpfast's entry, at the plain path, unchanged), each
// is current or stale against its own backend's keys, Keys names both and Backends
// the other backend; a partition, on no backend, has its one shared entry; a result of the
// same family made by newer code replaces that family's entry.
func TestKeptOneResultPerBackend(t *testing.T) {
	dir := t.TempDir()
	record := func(g *pipeline.Graph) {
		t.Helper()
		for _, n := range g.Nodes {
			if err := recordKept(dir, g, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	fast, xla := keptGraph(t, fastID), keptGraph(t, xlaID)
	record(fast)
	trainFast := keptPath(dir, "kept", "", keptNodeOf(fast, manifest.KindTrain).Name)
	before, err := os.ReadFile(trainFast)
	if err != nil {
		t.Fatal(err)
	}
	if ids, err := Backends(dir, "kept"); err != nil || !reflect.DeepEqual(ids, []string{fastID}) {
		t.Fatalf("only fpfast kept: backends %v, %v", ids, err)
	}
	record(xla)
	if after, _ := os.ReadFile(trainFast); string(after) != string(before) {
		t.Errorf("recording xla-cuda's result changed fpfast's entry:\n%s", after)
	}
	trainXLA := filepath.Join(dir, "cells", "kept", "xla-cuda", url.PathEscape(keptNodeOf(xla, manifest.KindTrain).Name)+".json")
	if b, err := os.ReadFile(trainXLA); err != nil || !strings.Contains(string(b), keptNodeOf(xla, manifest.KindTrain).Key.String()) {
		t.Fatalf("xla-cuda's entry %s: %v\n%s", trainXLA, err, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "cells", "kept", "xla-cuda", "partition%20seed=42.json")); err == nil {
		t.Error("the partition, on no backend, got an xla-cuda entry")
	}
	if ids, err := Backends(dir, "kept"); err != nil || !reflect.DeepEqual(ids, []string{fastID, xlaID}) {
		t.Errorf("Backends = %v, %v; want [%s %s]", ids, err, fastID, xlaID)
	}
	for _, g := range []*pipeline.Graph{fast, xla} {
		for _, n := range g.Nodes {
			if why, _, ok := Stale(dir, g)(n); ok {
				t.Errorf("%s %s: current result called stale: %s", NodeFamily(n), n.Name, why)
			}
		}
	}
	keys, err := Keys(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*pipeline.Graph{fast, xla} {
		for _, n := range g.Nodes {
			if !keys[artifacts.Digest(n.Key)] {
				t.Errorf("Keys lacks %s %s", NodeFamily(n), n.Name)
			}
		}
	}
	if len(keys) != 7 { // one partition, two trains, two evaluations, two reports
		t.Errorf("Keys names %d results, want 7", len(keys))
	}
	// XLA's lockstep code changed: its kept result is stale, saying so; fpfast's is not.
	xla4 := keptGraph(t, xla4ID)
	why, _, ok := Stale(dir, xla4)(keptNodeOf(xla4, manifest.KindEvaluate))
	if !ok || !strings.Contains(why, "lockstep-3") || !strings.Contains(why, "lockstep-4") {
		t.Errorf("xla-cuda's lockstep code changed: stale = %v, %q", ok, why)
	}
	record(xla4)
	if b, _ := os.ReadFile(trainXLA); !strings.Contains(string(b), keptNodeOf(xla4, manifest.KindTrain).Key.String()) {
		t.Errorf("a newer xla-cuda result did not replace the stale one:\n%s", b)
	}
	if after, _ := os.ReadFile(trainFast); string(after) != string(before) {
		t.Error("recording a newer xla-cuda result changed fpfast's entry")
	}
	if BackendFamily(xlaID) != "xla-cuda" || BackendFamily(fastID) != "fpfast" || BackendFamily(cpuID) != "fpcpu" || BackendFamily("") != "" {
		t.Errorf("BackendFamily: %q %q %q", BackendFamily(xlaID), BackendFamily(fastID), BackendFamily(cpuID))
	}
}

// recordKept is Record after writing, as a push would, dir's ac/ entry for n: one output
// whose digest is derived from n's key.
func recordKept(dir string, g *pipeline.Graph, n *pipeline.Node) error {
	d := artifacts.Sum([]byte("summary of " + n.Key.String()))
	entry := fmt.Sprintf(`{"v":1,"outputs":{"summary":"%s"},"sizes":{"summary":%d}}`, d, len("summary of "+n.Key.String()))
	if err := os.MkdirAll(filepath.Join(dir, "ac"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "ac", n.Key.String()), []byte(entry), 0o644); err != nil {
		return err
	}
	return Record(dir, g, n)
}

// Bind gives index entries recorded before sizes were bound the sizes their ac/
// entries record, leaves bound entries alone (so it can be rerun after new cells are
// kept), and never binds sizes to an entry whose ac/ entry names other outputs than the
// index binds.
func TestBindKeptAddsSizesOnlyToTheBoundOutputs(t *testing.T) {
	dir := t.TempDir()
	g := keptGraph(t, fastID)
	for _, n := range g.Nodes {
		if err := recordKept(dir, g, n); err != nil {
			t.Fatal(err)
		}
	}
	eval := keptNodeOf(g, manifest.KindEvaluate)
	path := keptPath(dir, g.Manifest.Name, NodeFamily(eval), eval.Name)
	unsize := func() {
		e, err := readKeptFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want := e.Sizes
		e.Sizes = nil
		if err := writeKept(path, e); err != nil {
			t.Fatal(err)
		}
		if len(want) != 1 {
			t.Fatalf("Record bound sizes %v, want the summary's", want)
		}
	}
	unsize()
	if n, err := Bind(dir); err != nil || n != 1 {
		t.Fatalf("Bind: %d bound, %v; want 1", n, err)
	}
	if e, _ := readKeptFile(path); len(e.Sizes) != 1 {
		t.Errorf("sizes after Bind: %v", e.Sizes)
	}
	if n, err := Bind(dir); err != nil || n != 0 {
		t.Errorf("Bind again: %d bound, %v; want none", n, err)
	}
	unsize()
	other := artifacts.Sum([]byte("another cell's summary"))
	entry := fmt.Sprintf(`{"v":1,"outputs":{"summary":"%s"},"sizes":{"summary":5}}`, other)
	if err := os.WriteFile(filepath.Join(dir, "ac", eval.Key.String()), []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Bind(dir); err == nil || !strings.Contains(err.Error(), "binds other outputs") {
		t.Errorf("Bind over an ac/ entry pointed elsewhere: %v, want refused", err)
	}
}
