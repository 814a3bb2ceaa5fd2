package manifest

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/model/arch"
)

const validManifest = `
name: t
seeds: [0, 1]
dataset: {name: synthetic, devices: 5}
partition: {scheme: natural}
model: {arch: mlp, hidden: [16]}
train:
  rounds: 3
  lr: 1e-3
methods:
  - name: fedavg
  - name: local
    train: {lr: 0.05}
`

func TestParseValidManifest(t *testing.T) {
	m, err := ParseManifest("m.yaml", []byte(validManifest))
	if err != nil {
		t.Fatal(err)
	}
	if m.Train.LR != 0.001 || m.Train.Rounds != 3 || m.Partition.TestFraction != 0.25 {
		t.Errorf("decoded train %+v partition %+v", m.Train, m.Partition)
	}
	runs, err := m.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 {
		t.Fatalf("got %d runs, want 2 methods × 2 seeds", len(runs))
	}
	if runs[0].Train.LR != 0.001 || runs[2].Train.LR != 0.05 {
		t.Errorf("method override: lr %v and %v", runs[0].Train.LR, runs[2].Train.LR)
	}
	if runs[2].Partition.Clients != 5 {
		t.Errorf("natural partition should have one client per device, got %d", runs[2].Partition.Clients)
	}
	if runs[1].Label() != "fedavg seed=1" {
		t.Errorf("label %q", runs[1].Label())
	}
}

// Each bad manifest must fail with an InputError naming the line and the field.
func TestManifestErrorsNamePlace(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown key suggests", "name: t\ndataset: {name: synthetic}\nmethods: [{name: fedavg}]\ntrain:\n  lerning_rate: 1\n  lrr: 0.1\n",
			`m.yaml:5:3: train.lerning_rate: unknown key`},
		{"typo suggests nearest", "name: t\ndataset: {name: synthetic}\nmethods: [{name: fedavg}]\ntrain:\n  rouds: 3\n",
			`m.yaml:5:3: train.rouds: unknown key (did you mean "rounds"?)`},
		{"negative lr", "name: t\ndataset: {name: synthetic}\nmethods: [{name: fedavg}]\ntrain:\n  lr: -0.1\n",
			`m.yaml:5:7: train.lr: must be greater than 0, got -0.1`},
		{"participation out of range", "name: t\ndataset: {name: synthetic}\nmethods: [{name: fedavg}]\ntrain: {participation: 1.5}\n",
			`m.yaml:4:24: train.participation: must be in (0, 1], got 1.5`},
		{"zero clients", "name: t\ndataset: {name: fmnist}\nmethods: [{name: fedavg}]\npartition: {clients: 0}\n",
			`partition.clients: must be greater than 0, got 0`},
		{"wrong type", "name: t\ndataset: {name: synthetic}\nmethods: [{name: fedavg}]\ntrain: {rounds: many}\n",
			`m.yaml:4:17: train.rounds: expected an integer, got "many"`},
		{"unknown method", "name: t\ndataset: {name: synthetic}\nmethods:\n  - name: fedavgg\n",
			`m.yaml:4:11: methods[0].name: unknown method "fedavgg" (did you mean "fedavg"?)`},
		{"unknown dataset", "name: t\ndataset: {name: fminst}\nmethods: [{name: fedavg}]\n",
			`dataset.name: "fminst" is not one of fmnist, synthetic, mnist, emnist, cifar10, cifar100, cifar10c, svhn, medmnist, officehome, miniimagenet, har, femnist (did you mean "fmnist"?)`},
		{"more clients than samples", "name: t\ndataset: {name: fmnist, max_samples: 100}\nmethods: [{name: fedavg}]\npartition: {clients: 80}\n",
			`m.yaml:4:22: partition.clients: 80 clients for 100 samples`},
		{"unknown augmentation", "name: t\ndataset: {name: fmnist}\nmethods: [{name: fedavg}]\ntrain: {augment: [crop, flop]}\n",
			`train.augment: "flop" is not one of crop, flip (did you mean "flip"?)`},
		{"syntax", "name: t\ntrain: {rounds: 3\n", `m.yaml:2: YAML syntax: did not find expected ',' or '}'`},
		{"tab", "name: t\n\tdataset: {}\n", `m.yaml:2: tab at line 2: YAML indents with spaces, not tabs`},
		{"missing name", "dataset: {name: synthetic}\nmethods: [{name: fedavg}]\n", `name: missing`},
		{"grid bad path", "name: t\ndataset: {name: synthetic}\nmethods: [{name: fedavg}]\ngrid: {train.lrr: [0.1]}\n",
			`m.yaml:4:8: grid.train.lrr: train has no field "lrr" (did you mean "lr"?)`},
		{"grid bad value", "name: t\ndataset: {name: synthetic}\nmethods: [{name: fedavg}]\ngrid: {train.lr: [0.1, -1]}\nmodel: {arch: logreg}\n",
			`m.yaml:4:24: grid.train.lr: must be greater than 0, got -1`},
		{"default model fits the data", "name: t\ndataset: {name: synthetic}\nmethods: [{name: fedavg}]\ntrain: {rounds: 0}\n",
			`train.rounds: must be greater than 0`},
		{"expect unknown method", "name: t\ndataset: {name: synthetic}\nmethods: [{name: fedavg}]\nexpect:\n  - {method: fedavgg, metric: best_pooled, published: 90}\n",
			`m.yaml:5:14: expect[0].method: no method labelled "fedavgg" in this manifest (did you mean "fedavg"?)`},
		{"expect bad metric", "name: t\ndataset: {name: synthetic}\nmethods: [{name: fedavg}]\nexpect:\n  - {method: fedavg, metric: best, published: 90}\n",
			`expect[0].metric: "best" is not one of`},
		{"cnn on synthetic", "name: t\ndataset: {name: synthetic}\nmethods: [{name: fedavg}]\nmodel: {arch: cnn4}\n",
			`model.arch: cnn4 needs image data`},
		{"resnet on synthetic", "name: t\ndataset: {name: synthetic}\nmethods: [{name: fedavg}]\nmodel: {arch: resnet18}\n",
			`m.yaml:4:15: model.arch: resnet18 needs image data`},
		{"augment on synthetic", "name: t\ndataset: {name: synthetic}\nmethods: [{name: fedavg}]\ntrain: {augment: [flip]}\n",
			`train.augment: crop and flip need image data`},
		{"method params", "name: t\ndataset: {name: synthetic}\nmethods: [{name: local, params: {mu: 0.1}}]\n",
			`methods[0].params.mu: method local has no parameter "mu" (it takes none)`},
		{"method params listed", "name: t\ndataset: {name: synthetic}\nmethods: [{name: fedselect, params: {variant: papr}}]\n",
			`methods[0].params.variant: "papr" is not one of paper, official, v1 (did you mean "paper"?)`},
		{"method param range", "name: t\ndataset: {name: synthetic}\nmethods: [{name: fedobp, params: {q: 1.5}}]\n",
			`methods[0].params.q: must be in [0, 1], got 1.5`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseManifest("m.yaml", []byte(c.yaml))
			if err == nil {
				t.Fatalf("no error; want %q", c.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v is not an input error", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, c.want)
			}
		})
	}
}

func TestGridExpansion(t *testing.T) {
	y := validManifest + "grid:\n  train.lr: [0.01, 0.1]\n  partition.test_fraction: [0.2, 0.3]\n"
	m, err := ParseManifest("m.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := m.Expand()
	if len(runs) != 2*2*2*2 {
		t.Fatalf("got %d runs", len(runs))
	}
	// fedavg takes the grid's lr; local's own train block wins.
	if runs[0].Train.LR != 0.01 || runs[0].Partition.TestFraction != 0.2 || runs[2].Partition.TestFraction != 0.3 {
		t.Errorf("first runs: %+v %+v", runs[0].Train, runs[2].Partition)
	}
	if got := runs[2].Label(); got != "fedavg lr=0.01 test_fraction=0.3 seed=0" {
		t.Errorf("label %q", got)
	}
	if runs[8].Train.LR != 0.05 {
		t.Errorf("local's lr = %v, want its own 0.05", runs[8].Train.LR)
	}
}

// model.arch accepts exactly the architectures package arch knows (the check tag cannot
// name the constants, so this test keeps the two lists equal).
func TestModelArchChoicesAreArchAll(t *testing.T) {
	f, _ := reflect.TypeOf(ModelSpec{}).FieldByName("Arch")
	got := strings.Split(strings.TrimPrefix(f.Tag.Get("check"), "oneof="), "|")
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(arch.All))) {
		t.Errorf("model.arch accepts %v, package arch knows %v", got, arch.All)
	}
}
