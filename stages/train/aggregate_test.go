package train

import (
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

func TestWeightedAverage(t *testing.T) {
	m := func(a, b float32) tensor.List {
		return tensor.List{{Name: "w", Shape: []int{2}, Data: []float32{a, b}}}
	}
	got, err := WeightedAverage([]tensor.List{m(1, 10), m(3, 20)}, []float64{1, 3})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{2.5, 17.5}; !reflect.DeepEqual(got[0].Data, want) {
		t.Errorf("average = %v, want %v", got[0].Data, want)
	}
	if _, err := WeightedAverage([]tensor.List{m(1, 1)}, []float64{0}); err == nil {
		t.Error("zero total weight accepted")
	}
	bad := tensor.List{{Name: "v", Shape: []int{2}, Data: []float32{1, 1}}}
	if _, err := WeightedAverage([]tensor.List{m(1, 1), bad}, []float64{1, 1}); err == nil {
		t.Error("mismatched models accepted")
	}
}

func TestMaskedAverageCounts(t *testing.T) {
	m := func(v ...float32) tensor.List { return tensor.List{{Name: "w", Shape: []int{3}, Data: v}} }
	models := []tensor.List{m(1, 2, 3), m(5, 6, 7)}
	masks := []tensor.List{m(0, 1, 1), m(0, 0, 1)}
	got, err := MaskedAverage(models, masks, []float64{1, 1}, m(-1, -1, -1))
	if err != nil {
		t.Fatal(err)
	}
	// Entry 0: both share → 3; entry 1: only model 1 → 6; entry 2: nobody → old −1.
	if want := []float32{3, 6, -1}; !reflect.DeepEqual(got[0].Data, want) {
		t.Errorf("masked average %v, want %v", got[0].Data, want)
	}
}
