package manifest

import (
	"reflect"
	"testing"
)

// Flatten names every parameter by its dotted path, methods by their name, lists of
// scalars as flow lists, and leaves out what is not a parameter.
func TestFlattenNamesParametersByPath(t *testing.T) {
	got := Flatten([]byte(`name: x
description: not a parameter
seeds: [0, 1]
train: {lr: 0.05}
methods: [{name: fedavg}, {name: fedprox, params: {mu: 0.01}}]
expect: [{method: fedavg, value: 1}]
`))
	want := map[string]string{"name": "x", "seeds": "[0, 1]", "train.lr": "0.05",
		"methods.fedavg.name": "fedavg", "methods.fedprox.name": "fedprox", "methods.fedprox.params.mu": "0.01"}
	if len(got) != len(want) {
		t.Errorf("Flatten = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Flatten[%s] = %q, want %q", k, got[k], v)
		}
	}
	if len(Flatten([]byte("{{"))) != 0 {
		t.Error("YAML that does not parse flattens to something")
	}
}

// Every `for` tag of the specs Settings reads is one applies understands.
func TestSettingsForTagsAreKnown(t *testing.T) {
	for _, v := range []any{DatasetSpec{}, PartitionSpec{}, ModelSpec{}, TrainSpec{}, ShiftSpec{}} {
		ty := reflect.TypeOf(v)
		for i := 0; i < ty.NumField(); i++ {
			if cond := ty.Field(i).Tag.Get("for"); !forTagKnown(cond) {
				t.Errorf("%s.%s: unknown for tag %q", ty.Name(), ty.Field(i).Name, cond)
			}
		}
	}
	for _, bad := range []string{"scheme", "generated=x", "colour=red"} {
		if forTagKnown(bad) {
			t.Errorf("forTagKnown(%q) = true", bad)
		}
	}
}

// Settings lists every field of the run's specs, typed as in the manifest, marks the fields
// of other schemes and architectures as not applying, and gives the effective partition seed.
func TestSettingsTypedAndApplying(t *testing.T) {
	m, err := ParseManifest("s.yaml", []byte(`name: s
seeds: [3]
dataset: {name: synthetic}
partition: {scheme: natural}
model: {arch: mlp, hidden: [64, 32]}
train: {rounds: 7}
methods: [{name: fedavg}]
`))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := m.Expand()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Setting{}
	for _, s := range Settings(&runs[0], m.Shift) {
		got[s.Path] = s
	}
	for path, want := range map[string]any{"train.rounds": int64(7), "model.hidden": "[64, 32]", "train.lr": 0.01,
		"partition.seed": int64(3), "train.eval_train_split": false, "train.augment": "[]", "method.algorithm": "fedavg",
		"dataset.devices": int64(30)} {
		if s, ok := got[path]; !ok || s.Value != want || !s.Applies {
			t.Errorf("%s = %+v, want %#v applying", path, s, want)
		}
	}
	for _, path := range []string{"partition.alpha", "partition.shards", "model.bn_stats", "train.crop_padding"} {
		if s, ok := got[path]; !ok || s.Applies {
			t.Errorf("%s = %+v, want it listed and not applying", path, s)
		}
	}
	if _, ok := got["shift.degrees"]; ok {
		t.Error("shift settings listed for a manifest without shifts")
	}
	if c := got["train.batch_size"].Column(); c != "train_batch_size" {
		t.Errorf("column %q", c)
	}
}
