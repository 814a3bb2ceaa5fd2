package methods

import (
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

func TestLotteryFLWithoutPruningIsFedAvg(t *testing.T) {
	lot, _ := runMLP(t, "lotteryfl", map[string]float64{"target_sparsity": 0}, nil, 3)
	avg, _ := runMLP(t, "fedavg", nil, nil, 3)
	if !reflect.DeepEqual(lot.Global, avg.Global) {
		t.Error("LotteryFL with target_sparsity 0 differs from FedAvg")
	}
	for c, k := range lot.Method.(*lotteryFLState).Keep {
		if k != nil {
			if ones, total := count(k); ones != total {
				t.Errorf("client %d pruned %d entries", c, total-ones)
			}
		}
	}
}

func TestLotteryFLPrunesToTarget(t *testing.T) {
	const target = 0.5
	st, _ := runMLP(t, "lotteryfl", map[string]float64{"acc_threshold": 0, "prune_rate": 0.3, "target_sparsity": target}, nil, 4)
	pruned := 0
	for c, keep := range st.Method.(*lotteryFLState).Keep {
		if keep == nil {
			continue
		}
		p := st.Personal[c]
		for _, k := range keep {
			zeros := 0
			pt := p[p.Find(k.Name)].Data
			for i, v := range k.Data {
				if v == 0 {
					zeros++
					if pt[i] != 0 {
						t.Fatalf("client %d: pruned %s[%d] = %v in its model", c, k.Name, i, pt[i])
					}
				}
			}
			frac := float64(zeros) / float64(len(k.Data))
			if !isWeight(k) && zeros != 0 {
				t.Errorf("client %d: bias %s pruned", c, k.Name)
			}
			if frac > target+1e-9 {
				t.Errorf("client %d: %s sparsity %.3f past the target %.1f", c, k.Name, frac, target)
			}
			pruned += zeros
		}
	}
	if pruned == 0 {
		t.Fatal("nothing was pruned with acc_threshold 0")
	}
	// prune() itself: per tensor, the smallest magnitudes go first, biases never, and never
	// past the target.
	f := &lotteryFL{rate: 0.5, target: 0.9}
	theta := tensor.List{{Name: "a.weight", Shape: []int{2, 2}, Data: []float32{0.3, -0.1, 0.05, -2}},
		{Name: "a.bias", Shape: []int{1}, Data: []float32{0}}}
	keep, ok := f.prune(theta, nil)
	if !ok || !reflect.DeepEqual(keep[0].Data, []float32{1, 0, 0, 1}) || keep[1].Data[0] != 1 {
		t.Errorf("prune kept %v / %v, want [1 0 0 1] / [1]", keep[0].Data, keep[1].Data)
	}
	keep2, _ := f.prune(theta, keep)
	if !reflect.DeepEqual(keep2[0].Data, []float32{0, 0, 0, 1}) {
		t.Errorf("second prune kept %v, want [0 0 0 1]", keep2[0].Data)
	}
	if _, ok := f.prune(theta, keep2); ok {
		t.Error("pruned past the target sparsity 0.9 of a 4-entry tensor")
	}
}
