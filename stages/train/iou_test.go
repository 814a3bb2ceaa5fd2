package train

import (
	"math"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// Issue 18, bug 5: two empty masks do not agree fully — their IoU is undefined (NaN), so
// that a tensor nobody personalizes (FedOBP's fc1.weight) is not drawn as 100 % agreement.
func TestPairwiseIoUOfEmptyMasksIsUndefined(t *testing.T) {
	mask := func(v ...float32) tensor.List {
		return tensor.List{{Name: "w", Shape: []int{len(v)}, Data: v}}
	}
	rows := PairwiseIoU([]tensor.List{mask(0, 0, 0), mask(0, 0, 0), mask(1, 1, 0), mask(1, 0, 0)})
	want := map[[2]int]float64{{0, 1}: math.NaN(), {0, 2}: 0, {2, 3}: 0.5, {1, 3}: 0}
	for _, r := range rows {
		w, ok := want[[2]int{r.ClientA, r.ClientB}]
		if !ok {
			continue
		}
		if (math.IsNaN(w) && !math.IsNaN(r.IoU)) || (!math.IsNaN(w) && r.IoU != w) {
			t.Errorf("IoU(%d, %d) = %v, want %v", r.ClientA, r.ClientB, r.IoU, w)
		}
	}
}
