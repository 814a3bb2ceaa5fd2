package listing

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/results/summary"
	"github.com/fedpipe/fedpipe/stats"
)

// Run states in `fedpipe ls`.
const (
	Cached  = "cached"  // the run's evaluation is in the store
	Stale   = "stale"   // it ran before, but something it depends on changed since
	Missing = "missing" // it never ran
)

// Row is one run in `fedpipe ls`: its identity, swept parameters, state and metrics
// (accuracies in percent; nil when not computed).
type Row struct {
	Manifest string `json:"manifest"`
	Label    string `json:"label"`
	Method   string `json:"method"`
	Seed     int64  `json:"seed"`
	// Params are the run's grid choices by field path.
	Params map[string]string `json:"params"`
	State  string            `json:"state"`
	// Reason says why a stale run would rerun.
	Reason string `json:"reason,omitempty"`
	// Key is the key of the run's evaluate stage.
	Key string `json:"key"`
	// FinalMean and FinalPooled are the final test accuracy (mean over clients, pooled over
	// test samples); BestMean and BestPooled the best at the evaluation rounds.
	FinalMean   *float64 `json:"final_client_mean_pct"`
	FinalPooled *float64 `json:"final_pooled_pct"`
	BestMean    *float64 `json:"best_client_mean_pct"`
	BestPooled  *float64 `json:"best_pooled_pct"`
	// Provenance is where and how the run's train stage was computed (nil: not cached, or
	// recorded before fedpipe kept provenance).
	Provenance *pipeline.Provenance `json:"provenance,omitempty"`
	// Evals are the run's evaluation rounds (ls --evals; cached runs only).
	Evals []Eval `json:"evals,omitempty"`
	// Intervals are the run's 95 % test-set intervals (cached runs only).
	Intervals Intervals `json:"test_set_intervals"`
}

// Intervals are one run's 95 % test-set intervals (percent): the pooled accuracy's
// (Wilson over the pooled test samples) and the client mean's (bootstrap over the clients,
// summary.BootstrapSeed). Neither says anything about another training seed.
type Intervals struct {
	Pooled     *stats.Interval `json:"final_pooled_test_set_ci95_pct,omitempty"`
	ClientMean *stats.Interval `json:"final_client_mean_bootstrap_ci95_pct,omitempty"`
}

// IntervalsFunc computes a cached run's test-set intervals from its evaluate stage (key,
// hex) and summary.
type IntervalsFunc func(store *artifacts.Store, key string, s results.Summary) (Intervals, error)

// List reads the state and metrics of every run of g, each cached run's test-set intervals
// computed by intervals.
func List(g *pipeline.Graph, store *artifacts.Store, intervals IntervalsFunc) ([]Row, error) {
	plan, err := pipeline.Plan(g, store, &pipeline.LogCapture{})
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, p := range plan {
		n := p.Node
		if n.Kind != manifest.KindEvaluate || n.Run == nil {
			continue
		}
		r := n.Run
		row := Row{Manifest: g.Manifest.File, Label: r.Label(), Method: r.MethodName, Seed: r.Seed,
			Params: map[string]string{}, Key: n.Key.String(), State: Cached}
		for _, a := range r.Vary {
			row.Params[a.Path] = a.Value
		}
		if p.State != pipeline.StateCached {
			row.State, row.Reason = Stale, p.Reason
			if p.Reason == "never ran" {
				row.State, row.Reason = Missing, ""
			}
			rows = append(rows, row)
			continue
		}
		if t := pipeline.TrainOf(n); t != nil {
			if pv, ok, err := pipeline.StageProvenance(store, t); err != nil {
				return nil, err
			} else if ok {
				row.Provenance = &pv
			}
		}
		if s, ok, err := cachedSummary(store, n); err != nil {
			return nil, err
		} else if ok {
			pct := func(v float64) *float64 { v *= 100; return &v }
			row.FinalMean, row.FinalPooled = pct(s.Mean), pct(s.Pooled)
			row.BestMean, row.BestPooled = pct(s.Best.Mean), pct(s.Best.Pooled)
			if row.Intervals, err = intervals(store, row.Key, s); err != nil {
				return nil, err
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// cachedSummary reads an evaluate stage's cached summary.
func cachedSummary(store *artifacts.Store, n *pipeline.Node) (results.Summary, bool, error) {
	rows, _, err := results.Read[results.Summary](store, artifacts.Digest(n.Key), results.OutEvaluateSummary)
	if results.Missing(err) {
		return results.Summary{}, false, nil
	}
	if err != nil && !errors.Is(err, results.ErrDecode) {
		return results.Summary{}, false, err
	}
	if err != nil || len(rows) != 1 {
		return results.Summary{}, false, fmt.Errorf("%s: summary: %v (%d rows)", n.Name, err, len(rows))
	}
	return rows[0], true, nil
}

// SweptPaths lists the grid paths of the rows in order of first appearance.
func SweptPaths(rows []Row) []string {
	var paths []string
	seen := map[string]bool{}
	for _, r := range rows {
		for _, p := range sortedParamPaths(r) {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	return paths
}

func sortedParamPaths(r Row) []string {
	// Params came from Run.Vary, whose order the label keeps: recover it from the label.
	var out []string
	for p := range r.Params {
		out = append(out, p)
	}
	idx := func(p string) int {
		return strings.Index(r.Label, " "+manifest.ShortPath(p)+"=")
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && idx(out[j]) < idx(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func Pct(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

// Header and Cells lay rows out for the table and CSV: identity, swept parameters,
// state, metrics.
func Header(paths []string, multi bool) []string {
	h := []string{"label", "method", "seed"}
	if multi {
		h = append([]string{"manifest"}, h...)
	}
	h = append(h, paths...)
	return append(h, "state", "final_client_mean_pct", "final_pooled_pct", "best_client_mean_pct", "best_pooled_pct")
}

// ProvHeader and ProvCells are the provenance columns the CSV (always) and the table
// (with --provenance) add after the metrics.
// train_wall_seconds is the total over a run's parts (pipeline.Provenance.Seconds),
// train_wall_parts each part's ("41.0 + 31.5"; empty for a run of one part).
var ProvHeader = []string{"fedpipe_version", "commit", "backend", "cpu", "threads", "train_wall_seconds", "train_wall_parts", "peak_rss_bytes", "date"}

func ProvCells(r Row) []string {
	p := r.Provenance
	if p == nil {
		return make([]string, len(ProvHeader))
	}
	num := func(v int64) string {
		if v == 0 {
			return ""
		}
		return strconv.FormatInt(v, 10)
	}
	return []string{p.Version, p.Commit, p.Backend, p.CPU, num(int64(p.Threads)), strconv.FormatFloat(p.Seconds, 'f', 3, 64), p.WallParts(), num(p.PeakRSS), p.Date}
}

func Cells(r Row, paths []string, multi bool) []string {
	c := []string{r.Label, r.Method, strconv.FormatInt(r.Seed, 10)}
	if multi {
		c = append([]string{r.Manifest}, c...)
	}
	for _, p := range paths {
		c = append(c, r.Params[p])
	}
	return append(c, r.State, Pct(r.FinalMean), Pct(r.FinalPooled), Pct(r.BestMean), Pct(r.BestPooled))
}

func MultiManifest(rows []Row) bool {
	for _, r := range rows {
		if r.Manifest != rows[0].Manifest {
			return true
		}
	}
	return false
}

// Eval is one evaluation round of a cached run in `fedpipe ls --evals`: its test accuracy
// in percent, pooled over the clients' test samples and averaged over clients, before
// fine-tuning and after it (nil for a run that does not fine-tune): FL-bench's logged
// "before -> after" figures.
type Eval struct {
	Round    int      `json:"round"`
	Pooled   float64  `json:"pooled_pct"`
	Mean     float64  `json:"client_mean_pct"`
	PooledFT *float64 `json:"pooled_ft_pct"`
	MeanFT   *float64 `json:"client_mean_ft_pct"`
	// Logged and LoggedFT are the pooled accuracy the authors' log of the run's method
	// records at the round, before and after fine-tuning (manifest.LoggedRun); nil where
	// the manifest records no log of it.
	Logged   *float64 `json:"logged_pooled_pct,omitempty"`
	LoggedFT *float64 `json:"logged_pooled_ft_pct,omitempty"`
}

// WithEvals fills the Evals of the cached rows of g (List' rows) from their train
// stages' per-round metrics.
func WithEvals(rows []Row, g *pipeline.Graph, store *artifacts.Store) error {
	byKey := map[string]*pipeline.Node{}
	for _, n := range g.Nodes {
		if n.Kind == manifest.KindEvaluate {
			byKey[n.Key.String()] = n
		}
	}
	for i := range rows {
		r := &rows[i]
		n := byKey[r.Key]
		if r.State != Cached || n == nil {
			continue
		}
		t := pipeline.TrainOf(n)
		if t == nil {
			continue
		}
		ms, err := trainMetrics(store, t)
		if err != nil {
			return err
		}
		r.Evals = EvalsOf(ms)
		withLogged(r.Evals, g, methodLabel(n, r.Label))
	}
	return nil
}

// trainMetrics reads a cached train stage's metrics table (nil if it has none).
func trainMetrics(store *artifacts.Store, t *pipeline.Node) ([]results.Metric, error) {
	ms, _, err := results.Read[results.Metric](store, artifacts.Digest(t.Key), results.OutTrainMetrics)
	switch {
	case errors.Is(err, results.ErrNoAction), errors.Is(err, results.ErrNoOutput):
		return nil, nil
	case errors.Is(err, results.ErrBlob), errors.Is(err, results.ErrDecode):
		return nil, fmt.Errorf("%s: metrics: %w", t.Name, err)
	}
	return ms, err
}

// EvalsOf summarizes the test rows of each evaluation round, in round order.
func EvalsOf(ms []results.Metric) []Eval {
	ft := map[int]summary.Summary{}
	for _, r := range summary.PerRoundFT(ms) {
		ft[r.Round] = r.Summary
	}
	rounds := summary.PerRound(ms)
	out := make([]Eval, 0, len(rounds))
	for _, r := range rounds {
		e := Eval{Round: r.Round, Pooled: 100 * r.Pooled, Mean: 100 * r.Mean}
		if f, ok := ft[r.Round]; ok {
			p, m := 100*f.Pooled, 100*f.Mean
			e.PooledFT, e.MeanFT = &p, &m
		}
		out = append(out, e)
	}
	return out
}

// EvalCells are one evaluation row's cells: [manifest,] label, round, then the four
// accuracies ("" where the run does not fine-tune).
func EvalCells(r Row, e Eval, multi bool, num func(float64) string) []string {
	var c []string
	if multi {
		c = append(c, r.Manifest)
	}
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return num(*v)
	}
	return append(c, r.Label, strconv.Itoa(e.Round), num(e.Pooled), opt(e.PooledFT), num(e.Mean), opt(e.MeanFT))
}

// ProvShort is the provenance as the table shows it: the commit's first 12 characters,
// the wall time in seconds (the total, with each part's beside it for a run of several)
// and the peak RSS in MiB; "-" where not recorded.
func ProvShort(p *pipeline.Provenance) []string {
	if p == nil {
		return []string{"-", "-", "-", "-", "-", "-"}
	}
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	rss := "-"
	if m := p.PeakRSSMiB(); m != "" {
		rss = m + " MiB"
	}
	wall := fmt.Sprintf("%.1f", p.Seconds)
	if parts := p.WallParts(); parts != "" {
		wall += " (" + parts + ")"
	}
	return []string{dash(p.ShortCommit()), dash(p.Backend), dash(p.ThreadsText()), wall, rss, dash(p.Date)}
}

// Metric returns the row's metric name (final_client_mean_pct, final_pooled_pct,
// best_client_mean_pct; anything else: best_pooled_pct), nil when not computed.
func (r Row) Metric(name string) *float64 {
	switch name {
	case "final_client_mean_pct":
		return r.FinalMean
	case "final_pooled_pct":
		return r.FinalPooled
	case "best_client_mean_pct":
		return r.BestMean
	}
	return r.BestPooled
}
