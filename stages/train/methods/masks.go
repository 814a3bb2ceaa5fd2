package methods

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/train"
)

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
// so the choice is deterministic: the first k of the candidates stably sorted by score. The
// largest and least are found by selecting the k-th score (not by sorting) and returned in
// candidate order; cands may be reordered.
func choose(cands []entry, score func(entry) float32, k int, rule string, rnd *rand.Rand) []entry {
	if k <= 0 {
		return nil
	}
	k = min(k, len(cands))
	if rule == "random" {
		perm := rnd.Perm(len(cands))[:k]
		out := make([]entry, k)
		for i, j := range perm {
			out[i] = cands[j]
		}
		return out
	}
	scores := make([]float32, len(cands))
	for i, e := range cands {
		scores[i] = score(e)
	}
	if hasNaN(scores) {
		// NaN orders nothing: keep the stable sort's choice, whatever it makes of it.
		less := func(a, b int) bool { return scores[a] > scores[b] }
		if rule == "least" {
			less = func(a, b int) bool { return scores[a] < scores[b] }
		}
		order := make([]int, len(cands))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return less(order[a], order[b]) })
		out := make([]entry, k)
		for i, j := range order[:k] {
			out[i] = cands[j]
		}
		return out
	}
	// The k-th score in the rule's order; the chosen are those strictly beyond it, then as
	// many of those equal to it as are missing, lowest position first.
	var kth float32
	beyond := func(v float32) bool { return v > kth }
	if rule == "least" {
		kth = selectNth(slices.Clone(scores), k-1)
		beyond = func(v float32) bool { return v < kth }
	} else {
		kth = selectNth(slices.Clone(scores), len(scores)-k)
	}
	ties := k
	for _, v := range scores {
		if beyond(v) {
			ties--
		}
	}
	out := cands[:0]
	for i, e := range cands {
		switch v := scores[i]; {
		case beyond(v):
			out = append(out, e)
		case v == kth && ties > 0:
			out = append(out, e)
			ties--
		}
	}
	return out
}

// Quantile returns the q-quantile of values with linear interpolation between order
// statistics (NumPy's and PyTorch's default): with s sorted and h = (n−1)·q, it is
// s[⌊h⌋] + (h − ⌊h⌋)·(s[⌊h⌋+1] − s[⌊h⌋]). values is reordered in place. The two order
// statistics are found by selection, in linear time, rather than by sorting (the same
// value: TestQuantileMatchesSorting); values with a NaN are sorted as before, since the
// order statistics of such a slice depend on the sort.
func Quantile(values []float32, q float64) float32 {
	n := len(values)
	if n == 0 {
		return float32(math.Inf(1))
	}
	h := float64(n-1) * q
	lo := int(math.Floor(h))
	var a, b float32
	if hasNaN(values) {
		sort.Slice(values, func(i, j int) bool { return values[i] < values[j] })
		if lo >= n-1 {
			return values[n-1]
		}
		a, b = values[lo], values[lo+1]
	} else {
		if lo >= n-1 {
			return slices.Max(values)
		}
		a = selectNth(values, lo)
		b = slices.Min(values[lo+1:])
	}
	f := h - float64(lo)
	return float32(float64(a) + f*(float64(b)-float64(a)))
}

// hasNaN reports whether values hold a NaN, which orders against nothing.
func hasNaN(values []float32) bool {
	return slices.ContainsFunc(values, func(v float32) bool { return v != v })
}

// selectNth reorders values (no NaN) so that values[k] is the k-th smallest, everything
// before it no larger and everything after it no smaller, and returns values[k]: a
// quickselect with a three-way partition (scores repeat, zeros above all) around the
// median of three, falling back to sorting a part that stops shrinking fast.
func selectNth(values []float32, k int) float32 {
	lo, hi := 0, len(values) // the k-th smallest lies in values[lo:hi]
	for budget := 2 * bits.Len(uint(len(values))); hi-lo > 16; budget-- {
		if budget == 0 {
			slices.Sort(values[lo:hi])
			return values[k]
		}
		x, y, z := values[lo], values[lo+(hi-lo)/2], values[hi-1]
		pivot := max(min(x, y), min(max(x, y), z))
		// values[lo:lt] < pivot, values[lt:i] == pivot, values[gt:hi] > pivot.
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch v := values[i]; {
			case v < pivot:
				values[lt], values[i] = v, values[lt]
				lt++
				i++
			case v > pivot:
				gt--
				values[gt], values[i] = v, values[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return pivot
		}
	}
	slices.Sort(values[lo:hi])
	return values[k]
}

// isClassifier reports whether a parameter belongs to the classifier (the last layer).
func isClassifier(name string) bool { return strings.HasPrefix(name, "classifier.") }

// isWeight reports whether a parameter is the weight tensor of a convolution or dense layer:
// the tensors sparse and selection methods prune or grow. Biases, BatchNorm's scale and
// shift (".weight"/".bias" of one dimension) and running statistics are not.
func isWeight(t tensor.Tensor) bool { return strings.HasSuffix(t.Name, ".weight") && len(t.Shape) >= 2 }

// selectionRows records the personalized count of each tensor of a client's mask.
func selectionRows(round, client int, mask tensor.List) []train.Selection {
	rows := make([]train.Selection, len(mask))
	for i, t := range mask {
		ones, _ := count(tensor.List{t})
		rows[i] = train.Selection{Round: round, Client: client, Tensor: t.Name, Personalized: ones, Total: len(t.Data)}
	}
	return rows
}
