package verify

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/results/summary"
	"github.com/fedpipe/fedpipe/stats"
)

// Verdicts of a claim (manifest.Claim) on the results at hand.
const (
	// Holds: every comparison the claim rests on goes its way, each at the 5 % level.
	Holds = "holds"
	// Reversed: some comparison goes significantly the other way (a finding about the
	// paper's claim on these results, not a failure of fedpipe).
	Reversed = "reversed"
	// Undecided: no comparison is reversed, but not all hold at the 5 % level.
	Undecided = "undecided"
	// NotComputable: a method the claim needs has no result (or none on a seed another
	// has).
	NotComputable = "not computable yet"
)

// OneRun labels a test over the clients of one run: what it can show.
const OneRun = "variation within one training run"

// PairTest is one comparison a claim rests on, on one cell: Higher claimed above Lower by
// more than Threshold points.
type PairTest struct {
	Higher    string  `json:"higher"`
	Lower     string  `json:"lower"`
	Threshold float64 `json:"threshold,omitempty"`
	// Higher's and Lower's figures (the claim's metric, percent), each the mean over the
	// Seeds paired; Diff = HigherValue − LowerValue.
	HigherValue float64 `json:"higher_value"`
	LowerValue  float64 `json:"lower_value"`
	Diff        float64 `json:"diff"`
	// Seeds are the seeds both methods have a result of.
	Seeds []int64 `json:"seeds,omitempty"`
	// Test is the paired test of the differences (Higher − Lower) − Threshold: over seeds
	// (exact sign-flip) with two or more seeds, else over the clients of the one seed
	// (their final accuracies, Wilcoxon signed-rank). Its Mean and CI are of Higher − Lower
	// (the threshold added back). nil when it cannot be run.
	Test *stats.Paired `json:"test,omitempty"`
	// Over says what the test pairs over, in words.
	Over    string `json:"over,omitempty"`
	Verdict string `json:"verdict"`
	// Note says why a comparison cannot be made or tested.
	Note string `json:"note,omitempty"`
}

// ClaimVerdict is a claim's verdict on one cell of the manifest.
type ClaimVerdict struct {
	Claim manifest.Claim `json:"claim"`
	// Says is the claim in words (manifest.Claim.Describe).
	Says   string `json:"says"`
	Config string `json:"config,omitempty"`
	// Verdict is Holds, Reversed, Undecided or NotComputable.
	Verdict string     `json:"verdict"`
	Pairs   []PairTest `json:"pairs"`
	// Deciding indexes the comparison the verdict names: the reversed one, or the closest
	// undecided one (-1: none).
	Deciding int `json:"deciding"`
	// Missing are the methods with no result.
	Missing []string `json:"missing,omitempty"`
	// SeedsOf is the number of seeds the manifest runs.
	SeedsOf int `json:"seeds_of"`
	// Why says why a claim of a manifest that cannot be checked here is not computable.
	Why string `json:"why,omitempty"`
}

// Unchecked gives each claim of m the verdict NotComputable, for why (its data is not
// installed here).
func Unchecked(m *manifest.Manifest, why string) []ClaimVerdict {
	var out []ClaimVerdict
	for _, c := range m.Claims {
		out = append(out, ClaimVerdict{Claim: c, Says: c.Describe(), Verdict: NotComputable, Deciding: -1, SeedsOf: len(m.Seeds), Why: why})
	}
	return out
}

// runFigures are one method's figures on one seed of one cell.
type runFigures struct {
	value   float64
	clients []float64 // final per-client accuracies, percent (nil: not read)
	counts  []stats.Count
}

// claimData holds, per cell key, per method label, per seed, the figures of a metric.
type claimData struct {
	order   []string
	configs map[string]string
	runs    map[string]map[string]map[int64]runFigures
}

// collect reads the metric of every run of every graph from store; a run already read
// from an earlier graph (the reference backend's) is kept.
func collect(graphs []*pipeline.Graph, store *artifacts.Store, c manifest.Claim, d *claimData) error {
	e := manifest.Expectation{Metric: c.Metric, Shift: c.Shift, Level: c.Level}
	kind, output := manifest.KindEvaluate, results.OutEvaluateSummary
	if c.Shift != "" {
		kind, output = manifest.KindShift, results.OutShiftSummary
	}
	for _, g := range graphs {
		for _, n := range g.Nodes {
			if n.Kind != kind {
				continue
			}
			a, ok, err := store.GetAction(artifacts.Digest(n.Key))
			if err != nil {
				return err
			}
			for _, r := range n.RunsOf() {
				k := cellKey(r)
				if _, seen := d.configs[k]; !seen {
					d.configs[k] = strings.TrimSpace(strings.TrimPrefix(r.Config(), r.MethodName))
					d.order = append(d.order, k)
					d.runs[k] = map[string]map[int64]runFigures{}
				}
				if d.runs[k][r.MethodName] == nil {
					d.runs[k][r.MethodName] = map[int64]runFigures{}
				}
				if !ok {
					continue
				}
				if _, have := d.runs[k][r.MethodName][r.Seed]; have {
					continue
				}
				b, err := results.Blob(store, a, output)
				if err != nil {
					continue // no current result to read: as if not computed
				}
				v, ok, err := valueOf(b, e)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				f := runFigures{value: v}
				f.clients, f.counts = clientFigures(store, a, c)
				d.runs[k][r.MethodName][r.Seed] = f
			}
		}
	}
	return nil
}

// clientFigures are the per-client final accuracies (percent) of the run whose evaluate
// or shift action is a, for claim c: nil for figures after fine-tuning (no per-client
// table holds them) or where the table cannot be read.
func clientFigures(store *artifacts.Store, a artifacts.Action, c manifest.Claim) ([]float64, []stats.Count) {
	var rows []results.Client
	switch {
	case strings.HasSuffix(c.Metric, "_ft"):
		return nil, nil
	case c.Shift != "":
		all, _, err := results.ReadFrom[results.ShiftClient](store, a, results.OutShiftClients)
		if err != nil {
			return nil, nil
		}
		for _, r := range all {
			if r.Shift == c.Shift && math.Abs(r.Level-c.Level) < 1e-9 {
				rows = append(rows, r.Client)
			}
		}
	default:
		var err error
		if rows, _, err = results.ReadFrom[results.Client](store, a, results.OutEvaluateClients); err != nil {
			return nil, nil
		}
	}
	acc, counts := make([]float64, len(rows)), make([]stats.Count, len(rows))
	for i, r := range rows {
		acc[i], counts[i] = 100*r.Accuracy, stats.CountOf(r.Accuracy, r.Samples)
	}
	return acc, counts
}

// Claims gives every claim of graphs[0]'s manifest a verdict per cell from the results in
// store: graphs are the manifest's graphs for the backends whose results count, the first
// preferred where several hold a seed's result.
func Claims(graphs []*pipeline.Graph, store *artifacts.Store) ([]ClaimVerdict, error) {
	if len(graphs) == 0 {
		return nil, nil
	}
	m := graphs[0].Manifest
	var labels []string
	for _, ms := range m.Methods {
		labels = append(labels, ms.Name)
	}
	byMetric := map[string]*claimData{}
	var out []ClaimVerdict
	for _, c := range m.Claims {
		what := fmt.Sprintf("%s %s %v", c.Metric, c.Shift, c.Level)
		d, ok := byMetric[what]
		if !ok {
			d = &claimData{configs: map[string]string{}, runs: map[string]map[string]map[int64]runFigures{}}
			if err := collect(graphs, store, c, d); err != nil {
				return nil, err
			}
			byMetric[what] = d
		}
		for _, k := range d.order {
			out = append(out, judge(c, labels, d.configs[k], d.runs[k], len(m.Seeds)))
		}
	}
	return out, nil
}

// judge decides claim c on one cell from its runs (label → seed → figures).
func judge(c manifest.Claim, labels []string, config string, runs map[string]map[int64]runFigures, seedsOf int) ClaimVerdict {
	v := ClaimVerdict{Claim: c, Says: c.Describe(), Config: config, Deciding: -1, SeedsOf: seedsOf}
	missing := map[string]bool{}
	for _, p := range c.Pairs(labels) {
		_, hasRun := runs[p[1]]
		if !hasRun && c.Kind == manifest.ClaimBest && len(c.Than) == 0 {
			continue // a method the grid does not run in this cell is not in its column
		}
		pt := comparePair(p[0], p[1], c.Threshold(), runs)
		for _, l := range p {
			if len(runs[l]) == 0 {
				missing[l] = true
			}
		}
		v.Pairs = append(v.Pairs, pt)
	}
	for l := range missing {
		v.Missing = append(v.Missing, l)
	}
	sort.Strings(v.Missing)
	count := map[string]int{}
	for _, p := range v.Pairs {
		count[p.Verdict]++
	}
	main := c.Method
	switch {
	case count[Reversed] > 0:
		v.Verdict = Reversed
	case c.Kind != manifest.ClaimOrder && missing[main]:
		v.Verdict = NotComputable
	case count[Holds] == len(v.Pairs) && len(v.Pairs) > 0:
		v.Verdict = Holds
	case count[Holds]+count[Undecided] == 0:
		v.Verdict = NotComputable
	case c.Kind == manifest.ClaimOrder && count[NotComputable] > 0:
		v.Verdict = NotComputable
	default:
		v.Verdict = Undecided
	}
	// The comparison the verdict names: the closest of those that read as the verdict does.
	for i, p := range v.Pairs {
		if p.Verdict != v.Verdict {
			continue
		}
		if v.Deciding < 0 || (p.Verdict != NotComputable && p.Diff-p.Threshold < v.Pairs[v.Deciding].Diff-v.Pairs[v.Deciding].Threshold) {
			v.Deciding = i
		}
	}
	if v.Verdict == Undecided && v.Deciding < 0 { // every comparison made holds; some are missing
		for i, p := range v.Pairs {
			if p.Verdict == Holds && (v.Deciding < 0 || p.Diff-p.Threshold < v.Pairs[v.Deciding].Diff-v.Pairs[v.Deciding].Threshold) {
				v.Deciding = i
			}
		}
	}
	return v
}

// comparePair compares higher with lower on the seeds both have: over seeds where two or
// more, else over the clients of the one seed.
func comparePair(higher, lower string, threshold float64, runs map[string]map[int64]runFigures) PairTest {
	pt := PairTest{Higher: higher, Lower: lower, Threshold: threshold, Verdict: NotComputable}
	h, l := runs[higher], runs[lower]
	for s := range h {
		if _, ok := l[s]; ok {
			pt.Seeds = append(pt.Seeds, s)
		}
	}
	slices.Sort(pt.Seeds)
	if len(pt.Seeds) == 0 {
		switch {
		case len(h) == 0 && len(l) == 0:
			pt.Note = "neither has a result"
		case len(h) == 0:
			pt.Note = higher + " has no result"
		case len(l) == 0:
			pt.Note = lower + " has no result"
		default:
			pt.Note = "no seed has a result of both"
		}
		return pt
	}
	var hv, lv []float64
	for _, s := range pt.Seeds {
		hv, lv = append(hv, h[s].value), append(lv, l[s].value)
	}
	pt.HigherValue, pt.LowerValue = summary.Mean(hv), summary.Mean(lv)
	pt.Diff = pt.HigherValue - pt.LowerValue
	var test stats.Paired
	switch {
	case len(pt.Seeds) >= 2:
		test = shiftedCompare(stats.Seeds, lv, hv, threshold)
		pt.Over = fmt.Sprintf("%d seeds (%s)", len(pt.Seeds), seedList(pt.Seeds))
	default:
		s := pt.Seeds[0]
		hc, lc := h[s].clients, l[s].clients
		if len(hc) == 0 || len(hc) != len(lc) {
			pt.Verdict, pt.Note = Undecided, fmt.Sprintf("one seed (%d), and no per-client figures of both to pair", s)
			return pt
		}
		if threshold == 0 && len(h[s].counts) == len(hc) && len(l[s].counts) == len(lc) {
			// As `fedpipe diff` pairs clients: from their counts, so that ties are exact.
			test = stats.CompareCounts(l[s].counts, h[s].counts)
		} else {
			test = shiftedCompare(stats.Clients, lc, hc, threshold)
		}
		pt.Over = fmt.Sprintf("the %d clients' final accuracies of seed %d, %s", len(hc), s, OneRun)
	}
	pt.Test = &test
	pt.Verdict = Undecided
	if test.P < stats.Alpha {
		if test.Mean > threshold {
			pt.Verdict = Holds
		} else if test.Mean < threshold {
			pt.Verdict = Reversed
		}
	}
	return pt
}

// shiftedCompare is stats.Compare of b against a + threshold (the test of b − a beyond the
// threshold), its mean and interval reported of b − a.
func shiftedCompare(unit stats.Unit, a, b []float64, threshold float64) stats.Paired {
	shifted := make([]float64, len(a))
	for i := range a {
		shifted[i] = a[i] + threshold
	}
	p := stats.Compare(unit, shifted, b)
	p.Mean += threshold
	if p.CI.Valid() {
		p.CI.Lo += threshold
		p.CI.Hi += threshold
	}
	return p
}

// seedList is "0, 1, 2".
func seedList(seeds []int64) string {
	s := make([]string, len(seeds))
	for i, x := range seeds {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
