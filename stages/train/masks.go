package train

import (
	"math"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/results"
)

// ZeroMask returns an all-zero mask (nothing personalized) shaped like params.
func ZeroMask(params tensor.List) tensor.List {
	out := make(tensor.List, len(params))
	for i, p := range params {
		out[i] = tensor.New(p.Name, p.Shape...)
	}
	return out
}

// MaskIoU is the intersection over union of two clients' masks on one tensor (stored as
// results.MaskIoU).
type MaskIoU = results.MaskIoU

// PairwiseIoU computes, per tensor, the IoU of every pair of clients' masks (FedSelect
// Fig. 4). The IoU of two empty masks is undefined (0/0) and is NaN — not 1: a tensor
// nobody personalizes is no agreement between clients; clients without a mask are skipped.
func PairwiseIoU(masks []tensor.List) []MaskIoU {
	var out []MaskIoU
	for a := range masks {
		for b := a + 1; b < len(masks); b++ {
			if masks[a] == nil || masks[b] == nil {
				continue
			}
			for ti, t := range masks[a] {
				u := masks[b][ti].Data
				inter, union := 0, 0
				for j, v := range t.Data {
					x, y := v != 0, u[j] != 0
					if x && y {
						inter++
					}
					if x || y {
						union++
					}
				}
				iou := math.NaN()
				if union > 0 {
					iou = float64(inter) / float64(union)
				}
				out = append(out, MaskIoU{Tensor: t.Name, ClientA: a, ClientB: b, IoU: iou})
			}
		}
	}
	return out
}
