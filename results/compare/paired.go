package compare

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/results/listing"
	"github.com/fedpipe/fedpipe/stats"
)

// Paired is one configuration's paired comparison of B against A: each side's metrics
// summarized over its seeds, and the difference B − A paired by seed (every metric) and by
// client (the final accuracy of each client, paired within its seed, the pairs of every
// seed pooled).
type Paired struct {
	// Config is the configuration compared ("" for two grid cells, whose runs are its seeds).
	Config string `json:"config"`
	// Seeds are the seeds both sides computed, in order.
	Seeds []int64 `json:"seeds"`
	// Metrics are the comparisons by metric, in Metrics order.
	Metrics []MetricCmp `json:"metrics"`
	// Clients compares the final per-client accuracy (percent), paired by client within each
	// seed, pooled over seeds; nil when
	// the sides' runs have no per-client tables or different clients.
	Clients *stats.Paired `json:"clients"`
	// Note says why there is no comparison by client.
	Note string `json:"note,omitempty"`
}

// MetricCmp is one metric over the paired seeds: A and B summarized over seeds (Student-t
// intervals) and B − A paired by seed (exact sign-flip permutation test).
type MetricCmp struct {
	Metric string        `json:"metric"`
	A      stats.Summary `json:"a"`
	B      stats.Summary `json:"b"`
	Seeds  stats.Paired  `json:"seeds"`
}

// group names the configuration a paired run key belongs to: the key less its seed.
func group(key string, seed int64) string {
	return strings.TrimSpace(strings.TrimSuffix(key, fmt.Sprintf("seed=%d", seed)))
}

// PairRuns pairs the two sides' cached runs by configuration and seed and compares them,
// reading the runs' per-client tables from store.
func PairRuns(a, b *Side, store *artifacts.Store) ([]Paired, error) {
	type pair struct{ a, b listing.Row }
	groups := map[string][]pair{}
	var order []string
	for _, k := range a.order {
		ra := a.Runs[k]
		rb, ok := b.Runs[k]
		if !ok || ra.State != listing.Cached || rb.State != listing.Cached {
			continue
		}
		g := group(k, ra.Seed)
		if _, seen := groups[g]; !seen {
			order = append(order, g)
		}
		groups[g] = append(groups[g], pair{ra, rb})
	}
	var out []Paired
	for _, g := range order {
		ps := groups[g]
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].a.Seed < ps[j].a.Seed })
		d := Paired{Config: g}
		for _, p := range ps {
			d.Seeds = append(d.Seeds, p.a.Seed)
		}
		for _, m := range Metrics {
			var va, vb []float64
			for _, p := range ps {
				x, y := p.a.Metric(m), p.b.Metric(m)
				if x != nil && y != nil && !math.IsNaN(*x) && !math.IsNaN(*y) {
					va, vb = append(va, *x), append(vb, *y)
				}
			}
			if len(va) == 0 {
				continue
			}
			d.Metrics = append(d.Metrics, MetricCmp{Metric: m, A: stats.Summarize(va), B: stats.Summarize(vb), Seeds: stats.Compare(stats.Seeds, va, vb)})
		}
		ca, cb, note, err := pairedClients(ps, func(p pair) (string, string) { return p.a.Key, p.b.Key }, store)
		if err != nil {
			return nil, err
		}
		if note != "" {
			d.Note = note
		} else {
			c := stats.CompareCounts(ca, cb)
			d.Clients = &c
		}
		out = append(out, d)
	}
	return out, nil
}

// pairedClients reads each pair's per-client final test counts (correct of samples) and pairs
// them client by client within the pair's seed, pooling the pairs of every seed: A's and B's.
// note says why they cannot be paired (a table missing, or different clients on the two sides).
func pairedClients[P any](pairs []P, keys func(P) (string, string), store *artifacts.Store) (a, b []stats.Count, note string, err error) {
	for _, p := range pairs {
		ka, kb := keys(p)
		ra, okA, err := listing.Clients(store, ka)
		if err != nil {
			return nil, nil, "", err
		}
		rb, okB, err := listing.Clients(store, kb)
		if err != nil {
			return nil, nil, "", err
		}
		if !okA || !okB {
			return nil, nil, "no per-client table in the store for some run", nil
		}
		if len(ra) != len(rb) {
			return nil, nil, "the runs have different clients", nil
		}
		for i := range ra {
			if ra[i].Client != rb[i].Client {
				return nil, nil, "the runs have different clients", nil
			}
			if ra[i].Samples != rb[i].Samples {
				return nil, nil, "the runs test a client on different samples", nil
			}
			a = append(a, stats.CountOf(ra[i].Accuracy, ra[i].Samples))
			b = append(b, stats.CountOf(rb[i].Accuracy, rb[i].Samples))
		}
	}
	if len(a) == 0 {
		return nil, nil, "no clients to pair", nil
	}
	return a, b, "", nil
}
