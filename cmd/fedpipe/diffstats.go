package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/results/listing"
	"github.com/fedpipe/fedpipe/stats"
)

// diffPaired is one configuration's paired comparison of B against A in `fedpipe diff`: each
// side's metrics summarized over its seeds, and the difference B − A paired by seed (every
// metric) and by client (the final accuracy of each client, paired within its seed, the pairs
// of every seed pooled).
type diffPaired struct {
	// Config is the configuration compared ("" for two grid cells, whose runs are its seeds).
	Config string `json:"config"`
	// Seeds are the seeds both sides computed, in order.
	Seeds []int64 `json:"seeds"`
	// Metrics are the comparisons by metric, in diffMetrics order.
	Metrics []diffMetricCmp `json:"metrics"`
	// Clients compares the final per-client accuracy (percent), paired by client within each
	// seed, pooled over seeds; nil when
	// the sides' runs have no per-client tables or different clients.
	Clients *stats.Paired `json:"clients"`
	// Note says why there is no comparison by client.
	Note string `json:"note,omitempty"`
}

// diffMetricCmp is one metric over the paired seeds: A and B summarized over seeds (Student-t
// intervals) and B − A paired by seed (exact sign-flip permutation test).
type diffMetricCmp struct {
	Metric string        `json:"metric"`
	A      stats.Summary `json:"a"`
	B      stats.Summary `json:"b"`
	Seeds  stats.Paired  `json:"seeds"`
}

// diffGroup names the configuration a paired run key belongs to: the key less its seed.
func diffGroup(key string, seed int64) string {
	return strings.TrimSpace(strings.TrimSuffix(key, fmt.Sprintf("seed=%d", seed)))
}

// pairedDiff pairs the two sides' cached runs by configuration and seed and compares them.
func pairedDiff(a, b *diffSide, store *artifacts.Store) ([]diffPaired, error) {
	type pair struct{ a, b lsRow }
	groups := map[string][]pair{}
	var order []string
	for _, k := range a.order {
		ra := a.Runs[k]
		rb, ok := b.Runs[k]
		if !ok || ra.State != lsCached || rb.State != lsCached {
			continue
		}
		g := diffGroup(k, ra.Seed)
		if _, seen := groups[g]; !seen {
			order = append(order, g)
		}
		groups[g] = append(groups[g], pair{ra, rb})
	}
	var out []diffPaired
	for _, g := range order {
		ps := groups[g]
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].a.Seed < ps[j].a.Seed })
		d := diffPaired{Config: g}
		for _, p := range ps {
			d.Seeds = append(d.Seeds, p.a.Seed)
		}
		for _, m := range diffMetrics {
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
			d.Metrics = append(d.Metrics, diffMetricCmp{Metric: m, A: stats.Summarize(va), B: stats.Summarize(vb), Seeds: stats.Compare(stats.Seeds, va, vb)})
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
		ra, okA, err := runClients(store, ka)
		if err != nil {
			return nil, nil, "", err
		}
		rb, okB, err := runClients(store, kb)
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

// runClients reads the per-client table of the evaluate stage with key (hex); ok is false
// when the stage or its table is not in the store.
func runClients(store *artifacts.Store, key string) ([]results.Client, bool, error) {
	d, err := artifacts.ParseDigest(key)
	if err != nil {
		return nil, false, nil
	}
	rows, _, err := results.Read[results.Client](store, d, results.OutEvaluateClients)
	if results.Missing(err) {
		return nil, false, nil // a missing or corrupt blob is a miss, as everywhere in fedpipe
	}
	if err != nil && !errors.Is(err, results.ErrDecode) {
		return nil, false, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("evaluate %s: clients: %w", key[:12], err)
	}
	return rows, true, nil
}

// diffMetricLabel names a metric of diffMetrics in the terminal table.
var diffMetricLabel = map[string]string{
	"final_client_mean_pct": "final % (client mean)",
	"final_pooled_pct":      "final % (pooled)",
	"best_pooled_pct":       "best pooled %",
}

// printPaired prints the paired comparisons after diff's run table.
func printPaired(w io.Writer, cmps []diffPaired) {
	if len(cmps) == 0 {
		fmt.Fprintln(w, "\npaired comparison: no run computed on both sides")
		return
	}
	for _, c := range cmps {
		name := "B − A"
		if c.Config != "" {
			name += " for " + c.Config
		}
		fmt.Fprintf(w, "\npaired comparison, %s (percentage points), seeds %s:\n", name, joinSeeds(c.Seeds))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "metric\tA: mean ± sample std (n) [95% CI over seeds]\tB: mean ± sample std (n) [95% CI over seeds]\tpaired over\tn\tmean Δ\t95% CI of Δ\tp\ttest")
		for _, m := range c.Metrics {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", diffMetricLabel[m.Metric], fmtSummary(m.A), fmtSummary(m.B), fmtPaired(m.Seeds))
		}
		if c.Clients != nil {
			fmt.Fprintf(tw, "%s\t\t\t%s\n", "final % per client (seeds pooled)", fmtPaired(*c.Clients))
		}
		_ = tw.Flush()
		if c.Note != "" {
			fmt.Fprintf(w, "no comparison by client: %s\n", c.Note)
		}
	}
	fmt.Fprintln(w, "p: two-sided, uncorrected for the number of comparisons; intervals: Student t. See docs/statistics.md.")
}

func joinSeeds(seeds []int64) string {
	var s []string
	for _, x := range seeds {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ",")
}

// fmtSummary is "mean ± std (n) [lo, hi]", leaving out what one value cannot have.
func fmtSummary(s stats.Summary) string {
	if s.N < 2 {
		return fmt.Sprintf("%.2f (n=1, no interval)", s.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f (n=%d) %s", s.Mean, s.Std, s.N, fmtInterval(s.CI))
}

// fmtInterval is "[lo, hi]" with two decimals, or "—" when it cannot be computed.
func fmtInterval(iv stats.Interval) string { return listing.FormatInterval(iv) }

// fmtPaired lays a comparison out as diff's columns: unit, n, mean Δ, interval, p, test.
func fmtPaired(p stats.Paired) string {
	n := fmt.Sprint(p.N)
	if p.Nonzero+p.Zeros > 0 { // a signed-rank test from counts: what it ranked, what it dropped
		n = fmt.Sprintf("%d (%d non-zero, %d zeros dropped)", p.N, p.Nonzero, p.Zeros)
	}
	return fmt.Sprintf("%s\t%s\t%+.2f\t%s\t%s\t%s", p.Unit, n, p.Mean, fmtInterval(p.CI), stats.FormatP(p.P), p.Test)
}
