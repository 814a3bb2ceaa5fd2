// Package partition deals a pooled dataset's samples out to clients (Dirichlet label skew,
// label shards, IID, or natural groups) and splits each client's samples into train and
// test. Every draw comes from a stream derived from the run's seed.
package partition

import (
	"fmt"
	"math"
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
	byClass := make([][]int, classes)
	for i, y := range labels {
		byClass[y] = append(byClass[y], i)
	}
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
				if float64(len(out[j])) >= limit {
					p[j] = 0
				}
				sum += p[j]
			}
			if sum == 0 { // every client is full: fall back to the raw draw
				p = rng.Dirichlet(r, alpha, clients)
				sum = 1
			}
			cum, start := 0.0, 0
			for j := range p {
				cum += p[j] / sum
				end := int(cum * float64(len(idx)))
				if j == clients-1 {
					end = len(idx)
				}
				end = min(max(end, start), len(idx))
				out[j] = append(out[j], idx[start:end]...)
				start = end
			}
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

// Natural gives each group (e.g. Synthetic's device) its own client.
func Natural(groups []int32, clients int) ([][]int, error) {
	out := make([][]int, clients)
	for i, g := range groups {
		if int(g) >= clients || g < 0 {
			return nil, fmt.Errorf("sample %d belongs to group %d, outside 0..%d", i, g, clients-1)
		}
		out[g] = append(out[g], i)
	}
	return out, nil
}

// Split shuffles one client's samples and cuts them into train and test parts, the test
// part holding round(testFraction·n) samples (at least one of each when n ≥ 2 and
// 0 < testFraction). Both parts come back sorted.
func Split(idx []int, testFraction float64, seed int64, client int) (train, test []int) {
	idx = append([]int(nil), idx...)
	r := rng.New(seed, rng.Global, client, "partition/split")
	r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	nTest := int(math.Round(testFraction * float64(len(idx))))
	if testFraction > 0 && len(idx) >= 2 {
		nTest = min(max(nTest, 1), len(idx)-1)
	}
	test, train = idx[:nTest], idx[nTest:]
	sort.Ints(train)
	sort.Ints(test)
	return train, test
}

// Subset returns a sorted random subset of size k of [0, n) (all of it when k ≤ 0 or k ≥ n).
func Subset(n, k int, seed int64) []int {
	if k <= 0 || k >= n {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := rng.New(seed, rng.Global, rng.Global, "partition/subset").Perm(n)[:k]
	sort.Ints(out)
	return out
}
