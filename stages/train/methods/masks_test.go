package methods

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// sortedQuantile is Quantile's definition computed by sorting: the reference.
func sortedQuantile(values []float32, q float64) float32 {
	s := slices.Clone(values)
	slices.Sort(s)
	h := float64(len(s)-1) * q
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return float32(float64(s[lo]) + (h-float64(lo))*(float64(s[lo+1])-float64(s[lo])))
}

// TestQuantileMatchesSorting: Quantile by selection gives the sorted definition's value,
// bit for bit, on slices of every kind a mask score takes — distinct values, heavy ties
// (mostly zeros), few distinct values, sorted and reversed runs, lengths 1 to 5,000 — at
// quantiles from 0 to 1, FedOBP's 0.99992 included; a hand case; and a slice with a NaN
// (sorted, as before).
func TestQuantileMatchesSorting(t *testing.T) {
	// Sorted .1 .3 .5 .7 .9; h = 4·0.4 = 1.6, so .3 + .6·(.5 − .3) = .42.
	if got := Quantile([]float32{0.9, 0.1, 0.5, 0.3, 0.7}, 0.4); math.Abs(float64(got)-0.42) > 1e-7 {
		t.Errorf("hand case: %v, want 0.42 (h = 1.6 between 0.3 and 0.5)", got)
	}
	r := rand.New(rand.NewPCG(1, 2))
	kinds := map[string]func(n int) []float32{
		"distinct": func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = r.Float32()
			}
			return v
		},
		"zeros": func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				if r.IntN(10) == 0 {
					v[i] = r.Float32() * 1e-3
				}
			}
			return v
		},
		"few": func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(r.IntN(3)) - 1
			}
			return v
		},
		"ascending": func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(i)
			}
			return v
		},
		"descending": func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(n - i)
			}
			return v
		},
	}
	for name, gen := range kinds {
		for _, n := range []int{1, 2, 3, 5, 17, 100, 1001, 5000} {
			for _, q := range []float64{0, 0.1, 0.4, 0.5, 0.9, 0.99, 0.99992, 1} {
				v := gen(n)
				want := sortedQuantile(v, q)
				got := Quantile(slices.Clone(v), q)
				if math.Float32bits(got) != math.Float32bits(want) && !(got == 0 && want == 0) {
					t.Fatalf("%s, n %d, q %v: %v, sorting gives %v", name, n, q, got, want)
				}
			}
		}
	}
	// With a NaN, the old sort decides: the same as sorting the same slice with sort.Slice.
	nan := []float32{3, float32(math.NaN()), 1, 2, 0.5}
	for _, q := range []float64{0, 0.3, 0.6, 1} {
		ref := slices.Clone(nan)
		sort.Slice(ref, func(i, j int) bool { return ref[i] < ref[j] })
		h := float64(len(ref)-1) * q
		lo := int(math.Floor(h))
		want := ref[len(ref)-1]
		if lo < len(ref)-1 {
			want = float32(float64(ref[lo]) + (h-float64(lo))*(float64(ref[lo+1])-float64(ref[lo])))
		}
		if got := Quantile(slices.Clone(nan), q); math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("NaN slice, q %v: %v, sort.Slice gives %v", q, got, want)
		}
	}
}

// BenchmarkQuantile times FedOBP's global threshold over a CNN4-sized score vector.
func BenchmarkQuantile(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	v := make([]float32, 580_000)
	for i := range v {
		if r.IntN(4) > 0 {
			v[i] = r.Float32()
		}
	}
	work := make([]float32, len(v))
	for b.Loop() {
		copy(work, v)
		Quantile(work, 0.99992)
	}
}

// TestChooseMatchesStableSort: choose's largest and least are, as sets, the first k of the
// candidates stably sorted by score (ties to the lower position), on scores with many ties
// (zeros among them) and on distinct ones, for every k; with a NaN among the scores, the
// stable sort's choice itself.
func TestChooseMatchesStableSort(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ref := func(cands []entry, score func(entry) float32, k int, rule string) map[entry]bool {
		c := slices.Clone(cands)
		sort.SliceStable(c, func(a, b int) bool {
			if rule == "least" {
				return score(c[a]) < score(c[b])
			}
			return score(c[a]) > score(c[b])
		})
		set := map[entry]bool{}
		for _, e := range c[:k] {
			set[e] = true
		}
		return set
	}
	for _, n := range []int{1, 2, 7, 60, 300} {
		for _, tied := range []bool{true, false} {
			vals := make([]float32, n)
			for i := range vals {
				if tied {
					vals[i] = float32(r.IntN(4)) * 0.25
				} else {
					vals[i] = r.Float32()
				}
			}
			if n == 60 && tied {
				vals[17] = float32(math.NaN())
			}
			score := func(e entry) float32 { return vals[e.i] }
			for _, rule := range []string{"largest", "least"} {
				for k := 1; k <= n; k++ {
					cands := make([]entry, n)
					for i := range cands {
						cands[i] = entry{t: 0, i: i}
					}
					want := ref(cands, score, k, rule)
					got := choose(cands, score, k, rule, nil)
					if len(got) != k {
						t.Fatalf("n %d, %s, k %d: %d chosen", n, rule, k, len(got))
					}
					for _, e := range got {
						if !want[e] {
							t.Fatalf("n %d (tied %v), %s, k %d: chose %v, not among the stable sort's first k", n, tied, rule, k, e)
						}
					}
				}
			}
		}
	}
}
