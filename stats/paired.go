package stats

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
)

// Unit is what a paired comparison pairs over.
type Unit string

// The units a comparison can pair over.
const (
	// Seeds pairs the two methods' runs of one seed (they share the partition): independent
	// repetitions of the whole experiment.
	Seeds Unit = "seeds"
	// Clients pairs the two methods' accuracies on one client, each averaged over seeds: the
	// clients of one federation, not independent experiments.
	Clients Unit = "clients"
)

// The names of the tests, as reports print them.
const (
	TestSignFlip     = "exact sign-flip permutation test"
	TestSignFlipMC   = "sign-flip permutation test (Monte Carlo)"
	TestSignedRank   = "Wilcoxon signed-rank test (exact)"
	TestSignedRankZ  = "Wilcoxon signed-rank test (normal approximation)"
	signFlipExactMax = 20      // 2^20 sign patterns enumerated at most
	signFlipDraws    = 1 << 17 // Monte Carlo sign patterns above that
	signedRankMaxN   = 200     // exact signed-rank distribution up to this many nonzero pairs
)

// Paired is the comparison of two methods paired over Unit: the N differences b − a, their
// Mean with its Student-t interval CI (invalid when N < 2), and the two-sided P of Test under
// the null hypothesis that the differences are symmetric about zero.
type Paired struct {
	Unit Unit     `json:"unit"`
	N    int      `json:"n"`
	Mean float64  `json:"mean_diff"`
	CI   Interval `json:"ci"`
	P    float64  `json:"p"`
	Test string   `json:"test"`
	// Nonzero and Zeros, for a signed-rank test from counts (CompareCounts), are the pairs
	// it ranks and the zero differences it drops (0 and 0 otherwise).
	Nonzero int `json:"nonzero,omitempty"`
	Zeros   int `json:"zeros,omitempty"`
}

// Compare compares b against a paired over unit (a[i] and b[i] are one seed's or one
// client's values): across seeds with SignFlip, across clients with SignedRank. The slices
// must have equal lengths; NaN for no pairs.
func Compare(unit Unit, a, b []float64) Paired {
	if len(a) != len(b) {
		panic("stats.Compare: unequal lengths")
	}
	d := make([]float64, len(a))
	for i := range a {
		d[i] = b[i] - a[i]
	}
	p := Paired{Unit: unit, N: len(d), Mean: Mean(d), CI: TInterval(d)}
	if unit == Clients {
		p.P, p.Test = SignedRank(d)
	} else {
		p.P, p.Test = SignFlip(d)
	}
	return p
}

// SignFlip is the two-sided p-value of the sign-flip permutation test of the paired
// differences d: the share of the 2^n sign patterns whose |sum| is at least the observed
// |sum|. Exact (every pattern enumerated) for n ≤ 20, so with n pairs it is never below
// 2/2^n (n = 1: 1; n = 3: 0.25; n = 5: 0.0625); above 20 pairs, 2^17 patterns drawn from a
// fixed seed, p = (hits+1)/(draws+1). NaN for no pairs.
func SignFlip(d []float64) (float64, string) {
	n := len(d)
	if n == 0 {
		return math.NaN(), TestSignFlip
	}
	obs, scale := 0.0, 0.0
	for _, x := range d {
		obs += x
		scale += math.Abs(x)
	}
	obs = math.Abs(obs)
	tol := 1e-12 * scale // sums equal but for rounding count as equal
	if n <= signFlipExactMax {
		return signFlipExact(d, obs-tol), TestSignFlip
	}
	r := rand.New(rand.NewPCG(uint64(n), 0x7369676e666c6970)) // "signflip"
	hits := 0
	for k := 0; k < signFlipDraws; k++ {
		s := 0.0
		for _, x := range d {
			if r.Uint64()&1 != 0 {
				s -= x
			} else {
				s += x
			}
		}
		if math.Abs(s) >= obs-tol {
			hits++
		}
	}
	return float64(hits+1) / float64(signFlipDraws+1), TestSignFlipMC
}

// signFlipExact is the share of all 2^len(d) sign patterns of d whose |sum| is at least
// atLeast.
func signFlipExact(d []float64, atLeast float64) float64 {
	hits := 0
	for mask := 0; mask < 1<<len(d); mask++ {
		s := 0.0
		for i, x := range d {
			if mask&(1<<i) != 0 {
				s -= x
			} else {
				s += x
			}
		}
		if math.Abs(s) >= atLeast {
			hits++
		}
	}
	return float64(hits) / float64(int(1)<<len(d))
}

// SignedRank is the two-sided p-value of the Wilcoxon signed-rank test of the paired
// differences d. Zero differences are dropped (Wilcoxon's convention); tied |d| get the mean
// of their ranks. Up to 200 nonzero differences the p-value is exact conditional on those
// ranks (the null distribution of the positive-rank sum over all 2^n sign patterns, ties
// included); above, the normal approximation with the tie-corrected variance and no
// continuity correction. p = 1 when every difference is zero; NaN for no pairs. Differences
// of accuracies computed in floating point may miss ties that are exact (0.3 − 0.1 against
// 0.5 − 0.3); CompareCounts takes them as rationals.
func SignedRank(d []float64) (float64, string) {
	if len(d) == 0 {
		return math.NaN(), TestSignedRank
	}
	var abs []float64
	var pos []bool
	for _, x := range d {
		if x != 0 {
			abs = append(abs, math.Abs(x))
			pos = append(pos, x > 0)
		}
	}
	if len(abs) == 0 {
		return 1, TestSignedRank
	}
	ranks, tieSum := midranks(abs)
	return signedRankP(ranks, tieSum, pos)
}

// signedRankP is SignedRank's p-value from the midranks of the nonzero |d|, their tie term
// and their signs.
func signedRankP(ranks []float64, tieSum float64, pos []bool) (float64, string) {
	n := len(ranks)
	// Doubled ranks are integers, so the rank sums are too.
	twice := make([]int, n)
	tPlus := 0
	for i, r := range ranks {
		twice[i] = int(math.Round(2 * r))
		if pos[i] {
			tPlus += twice[i]
		}
	}
	if n > signedRankMaxN {
		nf := float64(n)
		mean := nf * (nf + 1) / 4
		variance := nf*(nf+1)*(2*nf+1)/24 - tieSum/48
		if variance <= 0 {
			return 1, TestSignedRankZ
		}
		z := (float64(tPlus)/2 - mean) / math.Sqrt(variance)
		return math.Min(1, 2*normalSF(math.Abs(z))), TestSignedRankZ
	}
	total := n * (n + 1) // the sum of all doubled ranks
	dist := make([]float64, total+1)
	dist[0] = 1
	reach := 0
	for _, w := range twice {
		for s := reach; s >= 0; s-- {
			if dist[s] != 0 {
				dist[s+w] += dist[s] * 0.5
				dist[s] *= 0.5
			}
		}
		reach += w
	}
	lower, upper := 0.0, 0.0
	for s, q := range dist {
		if s <= tPlus {
			lower += q
		}
		if s >= tPlus {
			upper += q
		}
	}
	return math.Min(1, 2*math.Min(lower, upper)), TestSignedRank
}

// MinP is the smallest two-sided p-value test can give with n pairs (nonzero pairs for the
// signed-rank test): 2/2ⁿ for the exact tests (every sign pattern equally likely; 1 for none),
// 1/(draws+1) for the Monte Carlo sign-flip test, 0 for the normal approximation. Below 6
// pairs an exact test never reaches 5 %: a comparison of 5 seeds cannot be significant.
func MinP(test string, n int) float64 {
	switch test {
	case TestSignFlip, TestSignedRank:
		if n <= 0 {
			return 1
		}
		return math.Min(1, 2/math.Pow(2, float64(n)))
	case TestSignFlipMC:
		return 1 / float64(signFlipDraws+1)
	}
	return 0
}

// Count is one client's test result: Correct predictions out of Samples test samples.
type Count struct{ Correct, Samples int }

// CountOf is the count behind an accuracy (a fraction) over samples test samples.
func CountOf(accuracy float64, samples int) Count {
	return Count{Correct: int(math.Round(accuracy * float64(samples))), Samples: samples}
}

// CompareCounts compares b against a client by client (Clients) from their counts: each
// difference is (b.Correct − a.Correct) / Samples, in percent for the mean and its interval,
// and as an exact rational for the signed-rank test, so that equal differences tie exactly
// (floating-point differences of accuracies do not always: 100·b − 100·a). Nonzero and Zeros
// count the pairs the test ranks and those it drops. a[i] and b[i] must be one client's, over
// the same test split; a pair whose sample counts differ or are not positive is an error in
// the caller, and its p-value is NaN.
func CompareCounts(a, b []Count) Paired {
	if len(a) != len(b) {
		panic("stats.CompareCounts: unequal lengths")
	}
	d := make([]float64, len(a))
	num, den := make([]int64, 0, len(a)), make([]int64, 0, len(a))
	var pos []bool
	valid := true
	for i := range a {
		n := a[i].Samples
		if n <= 0 || b[i].Samples != n {
			valid = false
			continue
		}
		k := int64(b[i].Correct - a[i].Correct)
		d[i] = 100 * float64(k) / float64(n)
		if k != 0 {
			num, den = append(num, max(k, -k)), append(den, int64(n))
			pos = append(pos, k > 0)
		}
	}
	p := Paired{Unit: Clients, N: len(d), Mean: Mean(d), CI: TInterval(d), Nonzero: len(num), Zeros: len(d) - len(num)}
	switch {
	case !valid || len(d) == 0:
		p.P, p.Test = math.NaN(), TestSignedRank
	case len(num) == 0:
		p.P, p.Test = 1, TestSignedRank
	default:
		ranks, tieSum := midranksFrac(num, den)
		p.P, p.Test = signedRankP(ranks, tieSum, pos)
	}
	return p
}

// midranksFrac is midranks of the fractions num[i]/den[i] (den > 0), compared exactly.
func midranksFrac(num, den []int64) ([]float64, float64) {
	return midranksBy(len(num), func(i, j int) int { // num[i]/den[i] against num[j]/den[j]
		l, r := num[i]*den[j], num[j]*den[i]
		switch {
		case l < r:
			return -1
		case l > r:
			return 1
		}
		return 0
	})
}

// midranks ranks xs from 1, giving tied values the mean of their ranks, and returns the tie
// term Σ(t³ − t) over groups of t equal values.
func midranks(xs []float64) ([]float64, float64) {
	return midranksBy(len(xs), func(i, j int) int {
		switch {
		case xs[i] < xs[j]:
			return -1
		case xs[i] > xs[j]:
			return 1
		}
		return 0
	})
}

// midranksBy ranks n values ordered by cmp (negative, zero, positive as value i is below,
// equal to or above value j) from 1, tied values the mean of their ranks, and returns the tie
// term Σ(t³ − t) over groups of t equal values.
func midranksBy(n int, cmp func(i, j int) int) ([]float64, float64) {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool { return cmp(idx[x], idx[y]) < 0 })
	ranks := make([]float64, n)
	tieSum := 0.0
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && cmp(idx[j+1], idx[i]) == 0 {
			j++
		}
		r := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			ranks[idx[k]] = r
		}
		t := float64(j - i + 1)
		tieSum += t*t*t - t
		i = j + 1
	}
	return ranks, tieSum
}

// FormatP prints a p-value with three significant digits, "<0.0001" below that and "—" for
// one that cannot be computed.
func FormatP(p float64) string {
	switch {
	case math.IsNaN(p):
		return "—"
	case p < 1e-4:
		return "<0.0001"
	}
	return strconv.FormatFloat(p, 'g', 3, 64)
}
