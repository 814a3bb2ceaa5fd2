package train_test

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/stages/partition"
	"github.com/fedpipe/fedpipe/stages/train"
)

// ToyParams are the toy method's parameters: declared, defaulted and range-checked by their
// tags alone.
type ToyParams struct {
	Shrink float32 `param:"shrink" default:"1" check:"unit" doc:"factor the server applies to the average"`
	Epochs int     `param:"epochs" default:"1" check:"gt0" doc:"local epochs (replaces train.local_epochs)"`
	Order  string  `param:"order" choices:"shuffle|again" doc:"name of the sample-order stream"`
}

// toy is a method declared entirely in this test file, outside package train: FedAvg whose
// average is multiplied by shrink. It records the parameters it was built with.
type toy struct{ p ToyParams }

// built collects the parameter structs the toy's constructor received.
var built []ToyParams

func init() {
	train.Register(manifest.MethodDef{Name: "toy_shrink", Doc: "FedAvg, then the average times shrink."},
		func(p *ToyParams) train.Method {
			built = append(built, *p)
			return toy{*p}
		})
}

func (toy) Init(*train.State, int) {}

func (m toy) Train(l *train.Local, st *train.State, _ int) (train.Upload, error) {
	p, err := l.Fit(st.Global, train.Fit{Stream: m.p.Order, Epochs: train.Exactly(m.p.Epochs)})
	return train.Upload{Params: p}, err
}

func (m toy) Finish(st *train.State, uploads map[int]train.Upload, sizes map[int]int) error {
	var models []tensor.List
	var weights []float64
	for _, c := range slices.Sorted(maps.Keys(uploads)) {
		models, weights = append(models, uploads[c].Params), append(weights, 1)
	}
	g, err := train.WeightedAverage(models, weights)
	if err != nil {
		return err
	}
	for _, t := range g {
		for i := range t.Data {
			t.Data[i] *= m.p.Shrink
		}
	}
	st.Global = g
	return nil
}

func (toy) EvalModel(st *train.State, _ int) tensor.List { return st.Global }

const toyManifest = `name: toy
dataset:
  name: synthetic
  devices: 6
partition:
  scheme: natural
  test_fraction: 0.25
model:
  arch: logreg
train:
  rounds: 2
  participation: 0.5
  batch_size: 16
  lr: 0.05
methods:
  - name: toy_shrink
    params:
      shrink: SHRINK
`

// A method registered from a test file is validated by the manifest package like the
// built-in ones (defaults, check rules with file:line errors, unknown names) and trains
// through the loop with its parameters decoded into its struct.
func TestRegisterToyMethod(t *testing.T) {
	if d, ok := manifest.LookupMethod("toy_shrink"); !ok || d.Personal || len(d.ParamDefs()) != 3 {
		t.Fatalf("toy_shrink registered as %+v (%v)", d, ok)
	}
	parse := func(shrink string) ([]manifest.Run, error) {
		m, err := manifest.ParseManifest("toy.yaml", []byte(strings.Replace(toyManifest, "SHRINK", shrink, 1)))
		if err != nil {
			return nil, err
		}
		return m.Expand()
	}
	for shrink, want := range map[string]string{
		"1.5": "toy.yaml:18:15: methods[0].params.shrink: must be in [0, 1], got 1.5",
		"abc": `toy.yaml:18:15: methods[0].params.shrink: expected a number, got "abc"`,
	} {
		if _, err := parse(shrink); err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, manifest.ErrInvalid) {
			t.Errorf("shrink %s: error %v, want one containing %q", shrink, err, want)
		}
	}
	m, err := manifest.ParseManifest("toy.yaml", []byte(strings.Replace(toyManifest, "shrink: SHRINK", "shrnk: 0.5", 1)))
	if err == nil || !strings.Contains(err.Error(), `method toy_shrink has no parameter "shrnk" (did you mean "shrink"?)`) {
		t.Errorf("misspelt parameter: %v, %v", m, err)
	}

	runs, err := parse("0.5")
	if err != nil {
		t.Fatal(err)
	}
	r := &runs[0]
	// The key maps hold every parameter, defaults filled in, exactly as for built-in methods.
	if want := map[string]float64{"shrink": 0.5, "epochs": 1}; !reflect.DeepEqual(r.Params, want) {
		t.Errorf("Params %v, want %v", r.Params, want)
	}
	if want := map[string]string{"order": "shuffle"}; !reflect.DeepEqual(r.Options, want) {
		t.Errorf("Options %v, want %v", r.Options, want)
	}

	ds, err := (&data.Loader{}).Load(r.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	a, err := partition.Make(ds, r.Dataset, r.Partition, r.Seed)
	if err != nil {
		t.Fatal(err)
	}
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	built = nil
	st, err := train.Run(context.Background(), train.Config{Run: r, Data: ds, Assign: a, Backend: backend})
	if err != nil {
		t.Fatal(err)
	}
	if want := (ToyParams{Shrink: 0.5, Epochs: 1, Order: "shuffle"}); len(built) == 0 || built[0] != want {
		t.Errorf("constructor got %+v, want %+v", built, want)
	}
	if st.Round != 2 || len(st.Metrics) == 0 {
		t.Errorf("after the run: round %d, %d metric rows", st.Round, len(st.Metrics))
	}
}
