package example

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
	"github.com/fedpipe/fedpipe/stages/train"
	_ "github.com/fedpipe/fedpipe/stages/train/methods" // the registered methods it is compared with
)

const guide = "../../../../docs/adding-a-method.md"

// block returns the body of the guide's fenced block that starts with ```lang and holds
// marker.
func block(t *testing.T, lang, marker string) string {
	t.Helper()
	b, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range strings.Split(string(b), "```"+lang+"\n")[1:] {
		body, _, ok := strings.Cut(part, "\n```")
		if ok && strings.Contains(body, marker) {
			return body + "\n"
		}
	}
	t.Fatalf("%s has no ```%s block holding %q", guide, lang, marker)
	return ""
}

// The guide shows myditto.go as it is, so the code a reader copies is the code this test
// compiles and runs.
func TestGuideShowsTheExample(t *testing.T) {
	src, err := os.ReadFile("myditto.go")
	if err != nil {
		t.Fatal(err)
	}
	if got := block(t, "go", "package example"); got != string(src) {
		t.Errorf("the guide's Go block differs from stages/train/methods/example/myditto.go; paste the file into %s", guide)
	}
}

// The guide's manifest, which runs the example beside FedAvg, is valid once the example
// is registered.
func TestGuideManifestValidates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "myditto.yaml")
	if err := os.WriteFile(path, []byte(block(t, "yaml", "myditto")), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := manifest.LoadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := m.Expand()
	if err != nil {
		t.Fatal(err)
	}
	var methods []string // one per method, in manifest order (runs repeat them per seed)
	for _, r := range runs {
		if !slices.Contains(methods, r.Method) {
			methods = append(methods, r.Method)
		}
	}
	if !reflect.DeepEqual(methods, []string{"fedavg", "myditto"}) {
		t.Errorf("the guide's manifest runs %v, want fedavg and myditto", methods)
	}
}

// runMethod trains method for 4 rounds on six Synthetic clients (logistic regression).
func runMethod(t *testing.T, method string, params map[string]float64) *train.State {
	t.Helper()
	ds := data.Synthetic(data.SyntheticParams{Alpha: 0.5, Beta: 0.5, Devices: 6, Features: 60, Classes: 10})
	r := &manifest.Run{MethodName: method, Method: method, Seed: 3, Dataset: manifest.DatasetSpec{Name: "synthetic"},
		Partition: manifest.PartitionSpec{Scheme: "natural", Clients: 6, TestFraction: 0.25},
		Model:     manifest.ModelSpec{Arch: "logreg"},
		Train: manifest.TrainSpec{Rounds: 4, Participation: 0.5, LocalEpochs: 1, BatchSize: 16, LR: 0.05,
			Momentum: 0.5, EvalEvery: 2}}
	r.Params, r.Options = manifest.DefaultParams(method)
	for k, v := range params {
		r.Params[k] = v
	}
	a, err := partition.Make(ds, r.Dataset, r.Partition, r.Seed)
	if err != nil {
		t.Fatal(err)
	}
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	st, err := train.Run(context.Background(), train.Config{Run: r, Data: ds, Assign: a, Backend: backend})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// The example is Ditto: bit for bit the registered ditto's states and metrics, at its
// default λ and at another; with λ = 0 its personal models are Local training's.
func TestExampleIsDitto(t *testing.T) {
	for _, lambda := range []float64{0.1, 0.5} {
		p := map[string]float64{"lambda": lambda}
		mine, theirs := runMethod(t, "myditto", p), runMethod(t, "ditto", p)
		if !reflect.DeepEqual(mine.Global, theirs.Global) || !reflect.DeepEqual(mine.Personal, theirs.Personal) ||
			!reflect.DeepEqual(mine.Metrics, theirs.Metrics) || len(mine.Metrics) == 0 {
			t.Errorf("λ %g: myditto's state differs from ditto's", lambda)
		}
	}
	if mine, local := runMethod(t, "myditto", map[string]float64{"lambda": 0}), runMethod(t, "local", nil); !reflect.DeepEqual(mine.Personal, local.Personal) {
		t.Error("λ 0: the personal models are not Local training's")
	}
}
