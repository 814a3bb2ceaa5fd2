// Package partition deals a pooled dataset's samples out to clients (Dirichlet label skew,
// label shards, IID, pathological classes per client with quantity skew, domains, or
// natural groups) and splits each client's samples into train and
// test. Every draw comes from a stream derived from the run's seed.
package partition

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/fedpipe/fedpipe/stages/rng"
)

// MaxDirichletDraws bounds the redraws of Dirichlet until every client is large enough.
const MaxDirichletDraws = 10000

// Dirichlet deals samples by per-class Dirichlet proportions, as FL-bench (after
// NIID-Bench) does: for each class, draw p ~ Dir(α·1_N), zero the share of clients that
// already hold at least len(labels)/N samples, renormalize, cut the class's shuffled
// samples at the cumulative proportions; redraw everything until every client has at least
// minSamples samples. Returns each client's sample positions (indices into labels).
func Dirichlet(labels []int32, classes, clients int, alpha float64, minSamples int, seed int64) ([][]int, error) {
	return dirichlet(labels, classes, clients, alpha, minSamples, seed, true)
}

// DirichletUncapped is Dirichlet without the balance cap: every class is cut at its raw
// Dir(α) proportions, so clients differ in quantity as well as in labels (DM-PFL A.1.3;
// partition.balance_cap: false).
func DirichletUncapped(labels []int32, classes, clients int, alpha float64, minSamples int, seed int64) ([][]int, error) {
	return dirichlet(labels, classes, clients, alpha, minSamples, seed, false)
}

func dirichlet(labels []int32, classes, clients int, alpha float64, minSamples int, seed int64, capped bool) ([][]int, error) {
	byClass := classPositions(labels, classes)
	limit := float64(len(labels)) / float64(clients)
	for attempt := 0; attempt < MaxDirichletDraws; attempt++ {
		r := rng.New(seed, attempt, rng.Global, "partition/dirichlet")
		out := make([][]int, clients)
		for _, idx := range byClass {
			idx = append([]int(nil), idx...)
			r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
			p := rng.Dirichlet(r, alpha, clients)
			sum := 0.0
			for j := range p {
				if capped && float64(len(out[j])) >= limit {
					p[j] = 0
				}
				sum += p[j]
			}
			if sum == 0 { // every client is full: fall back to the raw draw
				p = rng.Dirichlet(r, alpha, clients)
				sum = 1
			}
			cutCumulative(out, idx, p, sum)
		}
		smallest := math.MaxInt
		for _, c := range out {
			smallest = min(smallest, len(c))
		}
		if smallest >= minSamples {
			return out, nil
		}
	}
	return nil, fmt.Errorf("no Dirichlet(%g) draw in %d gave all %d clients at least %d samples: lower min_samples or clients, or raise alpha",
		alpha, MaxDirichletDraws, clients, minSamples)
}

// cutCumulative appends to out[j] client j's share of idx under proportions p/sum: the cut
// points are the cumulative proportions times len(idx), truncated, the last client taking
// the rest. This is numpy's `np.split(idx, (np.cumsum(p) * len(idx)).astype(int)[:-1])`
// as FL-bench cuts a class (uglyghost+FedOBP data/utils/schemes/dirichlet.py:49-55), up to
// the division by sum (1 within rounding for the uncapped draw).
func cutCumulative(out [][]int, idx []int, p []float64, sum float64) {
	cum, start := 0.0, 0
	for j := range p {
		cum += p[j] / sum
		end := int(cum * float64(len(idx)))
		if j == len(p)-1 {
			end = len(idx)
		}
		end = min(max(end, start), len(idx))
		out[j] = append(out[j], idx[start:end]...)
		start = end
	}
}

// Shards sorts samples by label, cuts them into shards of samplesPerClient/shards samples
// (or, when samplesPerClient is 0, into clients·shards equal shards covering all data),
// and gives each client shards random shards. As in FedSelect's official code, a client
// may draw two shards of the same class.
func Shards(labels []int32, clients, shards, samplesPerClient int, seed int64) ([][]int, error) {
	n := len(labels)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return labels[order[a]] < labels[order[b]] })
	size := n / (clients * shards)
	if samplesPerClient > 0 {
		size = samplesPerClient / shards
	}
	if size == 0 || clients*shards*size > n {
		return nil, fmt.Errorf("%d clients × %d shards of %d samples do not fit in %d samples", clients, shards, size, n)
	}
	total := n / size
	r := rng.New(seed, rng.Global, rng.Global, "partition/shards")
	pick := r.Perm(total)[:clients*shards]
	out := make([][]int, clients)
	for c := 0; c < clients; c++ {
		for s := 0; s < shards; s++ {
			sh := pick[c*shards+s]
			out[c] = append(out[c], order[sh*size:(sh+1)*size]...)
		}
	}
	return out, nil
}

// IID shuffles the samples and deals them out in near-equal parts.
func IID(n, clients int, seed int64) [][]int {
	perm := rng.New(seed, rng.Global, rng.Global, "partition/iid").Perm(n)
	out := make([][]int, clients)
	for c := 0; c < clients; c++ {
		out[c] = perm[c*n/clients : (c+1)*n/clients]
	}
	return out
}

// Natural gives each natural group (Synthetic's device, FEMNIST's writer, HAR's subject)
// its own client. Groups with fewer than minSamples samples are dropped. clients = 0 keeps
// every remaining group; a smaller count keeps that many, drawn in a seeded order; either
// way clients are numbered in increasing group id. Returns each client's sample positions.
func Natural(groups []int32, clients, minSamples int, seed int64) ([][]int, error) {
	members := map[int32][]int{}
	for i, g := range groups {
		members[g] = append(members[g], i)
	}
	var kept []int32
	for g, m := range members {
		if len(m) >= minSamples {
			kept = append(kept, g)
		}
	}
	sort.Slice(kept, func(a, b int) bool { return kept[a] < kept[b] })
	switch {
	case clients > len(kept):
		return nil, fmt.Errorf("%d clients asked for, but only %d of the %d natural clients hold at least min_samples = %d samples: lower partition.clients or partition.min_samples",
			clients, len(kept), len(members), minSamples)
	case clients > 0 && clients < len(kept):
		pick := rng.New(seed, rng.Global, rng.Global, "partition/natural").Perm(len(kept))[:clients]
		sort.Ints(pick)
		chosen := make([]int32, clients)
		for i, k := range pick {
			chosen[i] = kept[k]
		}
		kept = chosen
	}
	out := make([][]int, len(kept))
	for c, g := range kept {
		out[c] = members[g]
	}
	return out, nil
}

// Domain gives each domain (e.g. OfficeHome's Art, Clipart, Product, Real World) its own
// client; clients must equal the number of domains.
func Domain(domains []int32, clients int) ([][]int, error) {
	out := make([][]int, clients)
	for i, d := range domains {
		if d < 0 || int(d) >= clients {
			return nil, fmt.Errorf("sample %d belongs to domain %d, but the domain partition has %d clients (one per domain): set partition.clients to the number of domains", i, d, clients)
		}
		out[d] = append(out[d], i)
	}
	for c, part := range out {
		if len(part) == 0 {
			return nil, fmt.Errorf("domain %d holds no samples: the domain partition needs partition.clients equal to the number of domains", c)
		}
	}
	return out, nil
}

// Pathological gives each client classesPerClient classes: after a seeded shuffle of the
// classes, client c holds classes (c·s + k) mod C for k < s, so every class goes to about
// N·s/C clients. Each class's shuffled samples are cut among its holders in proportion to
// their weights. Without quantity skew all weights are equal. With skew q > 0, a seeded
// set of round(q·N) clients shares half of the weight and the other clients the other half
// (DM-PFL: q = 0.9, 90% of the clients hold half of the data), so the two groups hold
// about half of the samples each (exactly half when every class is held by both groups in
// the same proportion). Classes no client holds are left out.
func Pathological(labels []int32, classes, clients, classesPerClient int, skew float64, seed int64) ([][]int, error) {
	if classesPerClient > classes {
		return nil, fmt.Errorf("classes_per_client %d exceeds the %d classes", classesPerClient, classes)
	}
	r := rng.New(seed, rng.Global, rng.Global, "partition/pathological")
	order := r.Perm(classes)
	holders := make([][]int, classes)
	for c := 0; c < clients; c++ {
		for k := 0; k < classesPerClient; k++ {
			cls := order[(c*classesPerClient+k)%classes]
			holders[cls] = append(holders[cls], c)
		}
	}
	weight := make([]float64, clients)
	for c := range weight {
		weight[c] = 1
	}
	if err := quantitySkew(weight, skew, r); err != nil {
		return nil, err
	}
	return cutAmongHolders(classPositions(labels, classes), holders, weight, clients, r), nil
}

// quantitySkew applies quantity_skew q > 0 to the clients' weights: a seeded group of
// round(q·clients) clients (at least one, at most all but one) shares half of the samples
// and the others the other half, each group keeping its weights' proportions (equal
// weights stay equal within a group). q = 0 leaves weight as it is and draws nothing.
func quantitySkew(weight []float64, skew float64, r *rand.Rand) error {
	if skew <= 0 {
		return nil
	}
	clients := len(weight)
	if clients < 2 {
		return fmt.Errorf("quantity_skew needs at least 2 clients")
	}
	big := min(max(int(math.Round(skew*float64(clients))), 1), clients-1)
	inGroup := make([]bool, clients)
	for _, c := range r.Perm(clients)[:big] {
		inGroup[c] = true
	}
	var sumIn, sumOut float64
	for c, w := range weight {
		if inGroup[c] {
			sumIn += w
		} else {
			sumOut += w
		}
	}
	for c := range weight {
		if inGroup[c] {
			weight[c] *= 0.5 / sumIn
		} else {
			weight[c] *= 0.5 / sumOut
		}
	}
	return nil
}

// Split shuffles one client's samples and cuts them into train and test parts, the test
// part holding round(testFraction·n) samples (at least one of each when n ≥ 2 and
// 0 < testFraction). Both parts come back sorted.
func Split(idx []int, testFraction float64, seed int64, client int) (train, test []int) {
	return SplitRounded(idx, testFraction, false, seed, client)
}

// SplitRounded is Split with the test count rounded down when floor is set
// (partition.test_rounding: floor, FL-bench's int(n·test_ratio)) instead of to nearest.
func SplitRounded(idx []int, testFraction float64, floor bool, seed int64, client int) (train, test []int) {
	idx = append([]int(nil), idx...)
	r := rng.New(seed, rng.Global, client, "partition/split")
	r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	nTest := int(math.Round(testFraction * float64(len(idx))))
	if floor {
		nTest = int(math.Floor(testFraction * float64(len(idx))))
	}
	if testFraction > 0 && len(idx) >= 2 {
		nTest = min(max(nTest, 1), len(idx)-1)
	}
	test, train = idx[:nTest], idx[nTest:]
	sort.Ints(train)
	sort.Ints(test)
	return train, test
}

// Subset returns a sorted random subset of size k of [0, n) (all of it when k ≤ 0 or k ≥ n).
func Subset(n, k int, seed int64) []int { return subset(n, k, seed, "partition/subset") }

// Fraction returns a sorted random subset of round(f·n) of [0, n) (all of it when f is 0),
// drawn from its own stream so that it composes with Subset.
func Fraction(n int, f float64, seed int64) []int {
	if f <= 0 {
		return subset(n, 0, seed, "")
	}
	return subset(n, max(int(math.Round(f*float64(n))), 1), seed, "partition/fraction")
}

func subset(n, k int, seed int64, purpose string) []int {
	if k <= 0 || k >= n {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := rng.New(seed, rng.Global, rng.Global, purpose).Perm(n)[:k]
	sort.Ints(out)
	return out
}

// cutAmongHolders shuffles each class's samples (in class order, from r) and cuts them among
// the class's holders in proportion to their weights, the last holder taking the rest.
func cutAmongHolders(byClass [][]int, holders [][]int, weight []float64, clients int, r *rand.Rand) [][]int {
	out := make([][]int, clients)
	for cls, idx := range byClass {
		hs := holders[cls]
		if len(hs) == 0 {
			continue
		}
		r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		sum := 0.0
		for _, c := range hs {
			sum += weight[c]
		}
		cum, start := 0.0, 0
		for j, c := range hs {
			cum += weight[c]
			end := int(math.Round(cum / sum * float64(len(idx))))
			if j == len(hs)-1 {
				end = len(idx)
			}
			out[c] = append(out[c], idx[start:end]...)
			start = end
		}
	}
	return out
}
