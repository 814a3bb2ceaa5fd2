package model

import (
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// Logits of logistic regression are x·W + b, here computed by hand, in batches of 2 with
// a short last batch.
func TestLogitsHandCase(t *testing.T) {
	backend, err := ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(backend, ModelSpec{Arch: ArchLogReg, InputShape: []int{2}, NumClasses: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	params := tensor.List{
		{Name: "classifier.weight", Shape: []int{2, 3}, Data: []float32{1, 0, -1, 2, 1, 0}},
		{Name: "classifier.bias", Shape: []int{3}, Data: []float32{0.5, 0, 0}},
	}
	x := []float32{1, 0, 0, 1, 1, 1}
	got, err := m.Logits(params, x, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{1.5, 0, -1, 2.5, 1, 0, 3.5, 1, -1}
	if len(got) != len(want) {
		t.Fatalf("%d logits, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("logits %v, want %v", got, want)
		}
	}
	if _, err := m.Logits(params, x[:5], 2); err == nil {
		t.Error("a partial sample was accepted")
	}
}
