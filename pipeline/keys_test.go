package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKeyCanonicalization(t *testing.T) {
	type p struct {
		LR  float64        `json:"lr"`
		Map map[string]any `json:"m"`
	}
	a, _, err := computeKey(KindTrain, p{LR: 1e-3, Map: map[string]any{"b": 1, "a": 2}}, nil, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := computeKey(KindTrain, p{LR: 0.001, Map: map[string]any{"a": 2, "b": 1.0}}, nil, "cpu")
	if a != b {
		t.Error("1e-3 and 0.001 (and map order, 1 vs 1.0) must give the same key")
	}
	for name, other := range map[string]func() (Key, []byte, error){
		"param": func() (Key, []byte, error) { return computeKey(KindTrain, p{LR: 0.002}, nil, "cpu") },
		"kind": func() (Key, []byte, error) {
			return computeKey(KindEvaluate, p{LR: 0.001, Map: map[string]any{"a": 2, "b": 1}}, nil, "cpu")
		},
		"backend": func() (Key, []byte, error) {
			return computeKey(KindTrain, p{LR: 0.001, Map: map[string]any{"a": 2, "b": 1}}, nil, "xla")
		},
		"input": func() (Key, []byte, error) {
			return computeKey(KindTrain, p{LR: 0.001, Map: map[string]any{"a": 2, "b": 1}}, []Key{{1}}, "cpu")
		},
	} {
		k, _, _ := other()
		if k == a {
			t.Errorf("changing the %s did not change the key", name)
		}
	}
	old := CodeVersions[KindTrain]
	CodeVersions[KindTrain] = old + 1
	c, _, _ := computeKey(KindTrain, p{LR: 0.001, Map: map[string]any{"a": 2, "b": 1}}, nil, "cpu")
	CodeVersions[KindTrain] = old
	if c == a {
		t.Error("bumping the stage code version did not change the key")
	}
}

func TestDiffDescriptorsNamesChangedField(t *testing.T) {
	type p struct {
		Train map[string]any `json:"train"`
	}
	_, a, _ := computeKey(KindTrain, p{Train: map[string]any{"lr": 0.01, "rounds": 5}}, nil, "cpu")
	_, b, _ := computeKey(KindTrain, p{Train: map[string]any{"lr": 0.05, "rounds": 5}}, nil, "cpu")
	d := diffDescriptors(a, b)
	if len(d) != 1 || !strings.Contains(d[0], "train.lr 0.01 → 0.05") {
		t.Errorf("diff = %q", d)
	}
}

// TestModelInitKeyedByContent: model.init's SHA-256 enters the train key, its path does
// not; a missing file is invalid input naming model.init.
func TestModelInitKeyedByContent(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	trainKey := func(init string) (Key, error) {
		src := "name: k\ndataset: {name: synthetic}\nmodel: {arch: mlp, init: " + init + "}\nmethods: [{name: fedavg}]\n"
		m, err := ParseManifest("k.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		g, err := Build(m, BuildOptions{Backend: "cpu", Describe: func(DatasetSpec) (*DataDesc, error) {
			return &DataDesc{Digest: "d", Shape: []int{60}, Classes: 10, Samples: 100}, nil
		}})
		if err != nil {
			return Key{}, err
		}
		for _, n := range g.Nodes {
			if n.Kind == KindTrain {
				return n.Key, nil
			}
		}
		t.Fatal("no train stage")
		return Key{}, nil
	}
	a, err := trainKey(write("a.safetensors", "weights one"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := trainKey(write("b.safetensors", "weights one"))
	c, _ := trainKey(write("c.safetensors", "weights two"))
	if a != b {
		t.Error("the same content under another path changed the key")
	}
	if a == c {
		t.Error("other content did not change the key")
	}
	_, err = trainKey(filepath.Join(dir, "nope.safetensors"))
	if !IsInvalid(err) || !strings.Contains(err.Error(), "model.init") {
		t.Errorf("missing init file: error %v, want invalid input naming model.init", err)
	}
}
