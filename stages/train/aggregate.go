package train

import (
	"fmt"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
)

// WeightedAverage returns Σ w_i·m_i / Σ w_i over the models, entry by entry. Sums run in
// float64 in the order given, so the result depends only on the inputs and their order.
func WeightedAverage(models []tensor.List, weights []float64) (tensor.List, error) {
	if len(models) == 0 || len(models) != len(weights) {
		return nil, fmt.Errorf("weighted average of %d models with %d weights", len(models), len(weights))
	}
	total := 0.0
	for _, w := range weights {
		if w < 0 {
			return nil, fmt.Errorf("negative weight %v", w)
		}
		total += w
	}
	if total == 0 {
		return nil, fmt.Errorf("weights sum to zero")
	}
	out := make(tensor.List, len(models[0]))
	acc := []float64{}
	for t := range models[0] {
		ref := models[0][t]
		if cap(acc) < len(ref.Data) {
			acc = make([]float64, len(ref.Data))
		}
		acc = acc[:len(ref.Data)]
		clear(acc)
		for i, m := range models {
			if len(m) != len(models[0]) || m[t].Name != ref.Name || len(m[t].Data) != len(ref.Data) {
				return nil, fmt.Errorf("model %d does not match model 0 at tensor %d (%s)", i, t, ref.Name)
			}
			w := weights[i] / total
			for j, v := range m[t].Data {
				acc[j] += w * float64(v)
			}
		}
		o := tensor.Tensor{Name: ref.Name, Shape: append([]int(nil), ref.Shape...), Data: make([]float32, len(acc))}
		for j, v := range acc {
			o.Data[j] = float32(v)
		}
		out[t] = o
	}
	return out, nil
}
