package pipeline

import (
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
