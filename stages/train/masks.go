package train

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/results"
)

// zeroMask returns an all-zero mask (nothing personalized) shaped like params.
func zeroMask(params tensor.List) tensor.List {
	out := make(tensor.List, len(params))
	for i, p := range params {
		out[i] = tensor.New(p.Name, p.Shape...)
	}
	return out
}

// invert returns 1 − mask.
func invert(mask tensor.List) tensor.List {
	out := mask.Clone()
	for _, t := range out {
		for i, v := range t.Data {
			t.Data[i] = 1 - v
		}
	}
	return out
}

// count returns the number of ones in a mask and its size.
func count(mask tensor.List) (ones, total int) {
	for _, t := range mask {
		for _, v := range t.Data {
			if v != 0 {
				ones++
			}
		}
		total += len(t.Data)
	}
	return ones, total
}

// merge returns personal where mask is 1 and shared elsewhere (mask nil: shared).
func merge(shared, personal, mask tensor.List) tensor.List {
	out := shared.Clone()
	if mask == nil {
		return out
	}
	for i, t := range out {
		m := mask[mask.Find(t.Name)].Data
		p := personal[personal.Find(t.Name)].Data
		for j := range t.Data {
			if m[j] != 0 {
				t.Data[j] = p[j]
			}
		}
		out[i] = t
	}
	return out
}

// entry addresses one value of a tensor list.
type entry struct{ t, i int }

// choose picks k of the candidate entries: the k largest scores (rule "largest"), the k
// smallest ("least"), or k at random from rnd ("random"). Ties go to the lower position,
// so the choice is deterministic.
func choose(cands []entry, score func(entry) float32, k int, rule string, rnd *rand.Rand) []entry {
	if k <= 0 {
		return nil
	}
	k = min(k, len(cands))
	switch rule {
	case "random":
		perm := rnd.Perm(len(cands))[:k]
		out := make([]entry, k)
		for i, j := range perm {
			out[i] = cands[j]
		}
		return out
	case "least":
		sort.SliceStable(cands, func(a, b int) bool { return score(cands[a]) < score(cands[b]) })
	default:
		sort.SliceStable(cands, func(a, b int) bool { return score(cands[a]) > score(cands[b]) })
	}
	return cands[:k]
}

// Quantile returns the q-quantile of values with linear interpolation between order
// statistics (NumPy's and PyTorch's default): with s sorted and h = (n−1)·q, it is
// s[⌊h⌋] + (h − ⌊h⌋)·(s[⌊h⌋+1] − s[⌊h⌋]). values is sorted in place.
func Quantile(values []float32, q float64) float32 {
	if len(values) == 0 {
		return float32(math.Inf(1))
	}
	sort.Slice(values, func(a, b int) bool { return values[a] < values[b] })
	h := float64(len(values)-1) * q
	lo := int(math.Floor(h))
	if lo >= len(values)-1 {
		return values[len(values)-1]
	}
	f := h - float64(lo)
	return float32(float64(values[lo]) + f*(float64(values[lo+1])-float64(values[lo])))
}

// isClassifier reports whether a parameter belongs to the classifier (the last layer).
func isClassifier(name string) bool { return strings.HasPrefix(name, "classifier.") }

// isWeight reports whether a parameter is the weight tensor of a convolution or dense layer:
// the tensors sparse and selection methods prune or grow. Biases, BatchNorm's scale and
// shift (".weight"/".bias" of one dimension) and running statistics are not.
func isWeight(t tensor.Tensor) bool { return strings.HasSuffix(t.Name, ".weight") && len(t.Shape) >= 2 }

// selectionRows records the personalized count of each tensor of a client's mask.
func selectionRows(round, client int, mask tensor.List) []Selection {
	rows := make([]Selection, len(mask))
	for i, t := range mask {
		ones, _ := count(tensor.List{t})
		rows[i] = Selection{Round: round, Client: client, Tensor: t.Name, Personalized: ones, Total: len(t.Data)}
	}
	return rows
}

// MaskIoU is the intersection over union of two clients' masks on one tensor (stored as
// results.MaskIoU).
type MaskIoU = results.MaskIoU

// PairwiseIoU computes, per tensor, the IoU of every pair of clients' masks (FedSelect
// Fig. 4). Two empty masks have IoU 1 (they agree); clients without a mask are skipped.
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
				iou := 1.0
				if union > 0 {
					iou = float64(inter) / float64(union)
				}
				out = append(out, MaskIoU{Tensor: t.Name, ClientA: a, ClientB: b, IoU: iou})
			}
		}
	}
	return out
}
