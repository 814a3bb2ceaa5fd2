package train

import (
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// WeightedAverage returns Σ w_i·m_i / Σ w_i over the models, entry by entry (see
// MaskedAverage, of which it is the case with no masks).
func WeightedAverage(models []tensor.List, weights []float64) (tensor.List, error) {
	return MaskedAverage(models, nil, weights, nil)
}

// MaskedAverage averages each entry over the models that share it: model i shares an entry
// where masks[i] is 0 (masks nil, or masks[i] nil, means it shares everything). The result
// at an entry is Σ w_i·m_i / Σ w_i over the sharing models — with unit weights, FedSelect's
// per-entry average with counts ω. An entry no model shares keeps its value in old (old
// may be nil only if every entry is shared by some model). Sums run in float64 in the order
// given, so the result depends only on the inputs and their order.
func MaskedAverage(models []tensor.List, masks []tensor.List, weights []float64, old tensor.List) (tensor.List, error) {
	if len(models) == 0 || len(models) != len(weights) || (masks != nil && len(masks) != len(models)) {
		return nil, fmt.Errorf("average of %d models with %d weights and %d masks", len(models), len(weights), len(masks))
	}
	for _, w := range weights {
		if w < 0 {
			return nil, fmt.Errorf("negative weight %v", w)
		}
	}
	out := make(tensor.List, len(models[0]))
	var acc, wsum []float64
	for t := range models[0] {
		ref := models[0][t]
		n := len(ref.Data)
		if cap(acc) < n {
			acc, wsum = make([]float64, n), make([]float64, n)
		}
		acc, wsum = acc[:n], wsum[:n]
		clear(acc)
		clear(wsum)
		for i, m := range models {
			if len(m) != len(models[0]) || m[t].Name != ref.Name || len(m[t].Data) != n {
				return nil, fmt.Errorf("model %d does not match model 0 at tensor %d (%s)", i, t, ref.Name)
			}
			var mask []float32
			if masks != nil && masks[i] != nil {
				j := masks[i].Find(ref.Name)
				if j >= 0 {
					mask = masks[i][j].Data
					if len(mask) != n {
						return nil, fmt.Errorf("mask of model %d for %s has %d entries, want %d", i, ref.Name, len(mask), n)
					}
				}
			}
			w := weights[i]
			for j, v := range m[t].Data {
				if mask != nil && mask[j] != 0 {
					continue
				}
				acc[j] += w * float64(v)
				wsum[j] += w
			}
		}
		o := tensor.Tensor{Name: ref.Name, Shape: append([]int(nil), ref.Shape...), Data: make([]float32, n)}
		for j := range acc {
			switch {
			case wsum[j] > 0:
				o.Data[j] = float32(acc[j] / wsum[j])
			case old != nil:
				k := old.Find(ref.Name)
				if k < 0 || len(old[k].Data) != n {
					return nil, fmt.Errorf("previous model lacks %s", ref.Name)
				}
				o.Data[j] = old[k].Data[j]
			default:
				return nil, fmt.Errorf("%s[%d]: no model shares it and there is no previous value (weights sum to zero?)", ref.Name, j)
			}
		}
		out[t] = o
	}
	return out, nil
}
