package methods

import (
	"fmt"
	"math"
	"sort"

	"github.com/fedpipe/fedpipe/artifacts/tensor"
	"github.com/fedpipe/fedpipe/stages/rng"
	"github.com/fedpipe/fedpipe/stages/train"
)

// Sparse training helpers shared by DM-PFL and FedDST. Only weight tensors (names ending in
// ".weight") are sparse; biases stay dense, as in RigL and FedDST. A sparse mask is a
// tensor list shaped like the model with 1 on active entries.

// ERKCounts returns, for each weight tensor of params (by name), the number of active
// entries of an Erdős–Rényi-Kernel allocation at overall weight density: tensor l gets
// density ε·(Σ dims)/(Π dims), with ε chosen so the active entries add up to
// density·(weight entries); a tensor whose density would exceed 1 is made dense and ε is
// solved again over the rest (RigL's procedure). Counts are rounded by largest remainder,
// so their sum is round(density·total) exactly.
func ERKCounts(params tensor.List, density float64) map[string]int {
	type layer struct {
		name  string
		n     int
		score float64 // (Σ dims)/(Π dims)
	}
	var ls []layer
	total := 0
	for _, p := range params {
		if !isWeight(p) {
			continue
		}
		sum := 0
		for _, d := range p.Shape {
			sum += d
		}
		ls = append(ls, layer{p.Name, len(p.Data), float64(sum) / float64(len(p.Data))})
		total += len(p.Data)
	}
	density = min(max(density, 0), 1)
	target := int(math.Round(density * float64(total)))
	dense := map[string]bool{}
	var exact map[string]float64
	for {
		rest, denseN := 0.0, 0
		for _, l := range ls {
			if dense[l.name] {
				denseN += l.n
			} else {
				rest += l.score * float64(l.n)
			}
		}
		eps := 0.0
		if rest > 0 {
			eps = (float64(target) - float64(denseN)) / rest
		}
		exact = map[string]float64{}
		grew := false
		for _, l := range ls {
			if dense[l.name] {
				exact[l.name] = float64(l.n)
				continue
			}
			d := eps * l.score
			if d > 1 {
				dense[l.name], grew = true, true
			}
			exact[l.name] = max(d, 0) * float64(l.n)
		}
		if !grew {
			break
		}
	}
	// Largest remainder: floor everything, then hand the missing entries to the largest
	// fractional parts (ties to the earlier tensor), never past a tensor's size.
	out := map[string]int{}
	got := 0
	order := make([]int, len(ls))
	for i, l := range ls {
		out[l.name] = min(int(math.Floor(exact[l.name])), l.n)
		got += out[l.name]
		order[i] = i
	}
	frac := func(i int) float64 { return exact[ls[i].name] - math.Floor(exact[ls[i].name]) }
	sort.SliceStable(order, func(a, b int) bool { return frac(order[a]) > frac(order[b]) })
	for got < target {
		moved := false
		for _, i := range order {
			if got < target && out[ls[i].name] < ls[i].n {
				out[ls[i].name]++
				got++
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	return out
}

// randomMask returns a sparse mask with counts[name] active entries in each weight tensor,
// chosen uniformly from r, and every other tensor dense.
func randomMask(params tensor.List, counts map[string]int, seed int64, purpose string) tensor.List {
	m := train.ZeroMask(params)
	for i, t := range m {
		k, ok := counts[t.Name]
		if !ok {
			fill(t.Data, 1)
			continue
		}
		r := rng.New(seed, 0, rng.Global, fmt.Sprintf("%s/%s", purpose, t.Name))
		for _, j := range r.Perm(len(t.Data))[:k] {
			m[i].Data[j] = 1
		}
	}
	return m
}

func fill(d []float32, v float32) {
	for i := range d {
		d[i] = v
	}
}

// applyMask returns params with the entries outside mask set to zero.
func applyMask(params, mask tensor.List) tensor.List {
	out := params.Clone()
	for _, t := range out {
		m := mask[mask.Find(t.Name)].Data
		for j := range t.Data {
			if m[j] == 0 {
				t.Data[j] = 0
			}
		}
	}
	return out
}

// allOnes reports whether a mask has no inactive entry.
func allOnes(mask tensor.List) bool {
	ones, total := count(mask)
	return ones == total
}

// orNil returns nil for an all-ones mask (so training takes the unmasked step, which is
// bit-identical) and mask otherwise.
func orNil(mask tensor.List) tensor.List {
	if allOnes(mask) {
		return nil
	}
	return mask
}

// PruneRegrow readjusts a sparse mask in place, tensor by tensor, for every weight tensor:
// it removes the k = round(frac·active) active entries of smallest |params|, then adds k
// entries of largest |grad| among the inactive ones — the just-pruned entries included, so
// an entry can come straight back (DM-PFL's variant; FedDST and RigL exclude them, see
// regrowPruned). A regrown entry that was pruned in the same call keeps its value; any
// other regrown entry starts at zero (RigL). Ties go to the lower position. The number of
// active entries of every tensor is unchanged. It returns params with the new mask applied.
func PruneRegrow(params, grad, mask tensor.List, frac float64, regrowPruned bool) tensor.List {
	out := params.Clone()
	for ti, t := range mask {
		if !isWeight(t) {
			continue
		}
		w := out[out.Find(t.Name)].Data
		g := grad[grad.Find(t.Name)].Data
		var active, inactive []int
		for j, v := range t.Data {
			if v != 0 {
				active = append(active, j)
			} else {
				inactive = append(inactive, j)
			}
		}
		k := int(math.Round(frac * float64(len(active))))
		if k == 0 || len(inactive) == 0 && !regrowPruned {
			continue
		}
		sort.SliceStable(active, func(a, b int) bool { return abs32(w[active[a]]) < abs32(w[active[b]]) })
		pruned := active[:k]
		cands := inactive
		if regrowPruned {
			cands = append(append([]int(nil), inactive...), pruned...)
			sort.Ints(cands)
		}
		k = min(k, len(cands))
		sort.SliceStable(cands, func(a, b int) bool { return abs32(g[cands[a]]) > abs32(g[cands[b]]) })
		grown := cands[:k]
		wasPruned := map[int]float32{}
		for _, j := range pruned {
			wasPruned[j] = w[j]
			mask[ti].Data[j] = 0
			w[j] = 0
		}
		for _, j := range grown {
			mask[ti].Data[j] = 1
			w[j] = wasPruned[j] // zero unless it was pruned just now
		}
	}
	return out
}

// topMagnitudeMask returns, per weight tensor, the counts[name] entries of largest |w|
// among the candidates (cand nil: all entries), fewer if there are fewer candidates;
// other tensors are dense. Ties go to the lower position.
func topMagnitudeMask(w tensor.List, counts map[string]int, cand tensor.List) tensor.List {
	positions := func(name string, n int) []int {
		var idx []int
		for j := range n {
			if cand == nil || cand[cand.Find(name)].Data[j] != 0 {
				idx = append(idx, j)
			}
		}
		return idx
	}
	before := func(name string) func(x, y int) bool {
		d := w[w.Find(name)].Data
		return func(x, y int) bool { return abs32(d[x]) > abs32(d[y]) }
	}
	return rankedMask(w, counts, positions, before)
}

// rankedMask is the per-tensor top-k mask that topMagnitudeMask and voteMask share: for
// each weight tensor with a count k, it orders the positions that positions(name, size)
// offers by before(name) (a stable sort, so ties go to the lower position) and keeps the
// first k of them, fewer if fewer are offered; a tensor without a count is dense.
func rankedMask(w tensor.List, counts map[string]int, positions func(name string, n int) []int, before func(name string) func(x, y int) bool) tensor.List {
	m := train.ZeroMask(w)
	for i, t := range m {
		k, ok := counts[t.Name]
		if !ok {
			fill(t.Data, 1)
			continue
		}
		idx := positions(t.Name, len(t.Data))
		less := before(t.Name)
		sort.SliceStable(idx, func(a, b int) bool { return less(idx[a], idx[b]) })
		for _, j := range idx[:min(k, len(idx))] {
			m[i].Data[j] = 1
		}
	}
	return m
}

// maskCounts returns the active entries per weight tensor of a mask.
func maskCounts(mask tensor.List) map[string]int {
	out := map[string]int{}
	for _, t := range mask {
		if isWeight(t) {
			n, _ := count(tensor.List{t})
			out[t.Name] = n
		}
	}
	return out
}

// sparseBytes is the size of params on mask's active entries as float32 values, plus one
// bit per entry when the mask itself travels.
func sparseBytes(mask tensor.List, withMask bool) int64 {
	ones, total := count(mask)
	b := 4 * int64(ones)
	if withMask {
		b += (int64(total) + 7) / 8
	}
	return b
}
