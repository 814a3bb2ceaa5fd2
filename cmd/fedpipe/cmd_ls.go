package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages/data"
)

// Run states in `fedpipe ls`.
const (
	lsCached  = "cached"  // the run's evaluation is in the store
	lsStale   = "stale"   // it ran before, but something it depends on changed since
	lsMissing = "missing" // it never ran
)

// lsRow is one run in `fedpipe ls`: its identity, swept parameters, state and metrics
// (accuracies in percent; nil when not computed).
type lsRow struct {
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
	Evals []lsEval `json:"evals,omitempty"`
	// Intervals are the run's 95 % test-set intervals (cached runs only).
	Intervals runIntervals `json:"test_set_intervals"`
}

// lsCmd lists every run of the manifests: one row per run.
func lsCmd(c *call) error {
	name, args, stdout, stderr := c.name, c.args, c.stdout, c.stderr
	fs := c.flags()
	var f commonFlags
	f.register(fs, "ls")
	asCSV := fs.Bool("csv", false, "print CSV instead of a table")
	evals := fs.Bool("evals", false, "one row per evaluation round of each cached run instead: test accuracy pooled and averaged over clients, before and after fine-tuning (FL-bench's logged 'before -> after'); with --json, each run's \"evals\"")
	withProv := fs.Bool("provenance", false, "add the train stage's provenance to the table (commit, backend, threads, wall time, peak RSS, date); --csv and --json always carry it")
	if name == "show" {
		fs.Bool("manifest", false, "print the effective manifest recorded with the results instead")
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: fedpipe %s MANIFEST... [flags]\n\nLists every run of the MANIFESTs, one row each: its label, method, seed, every swept parameter\nas a column, its state — cached (its evaluation is in the store), stale (it ran, but an input\nchanged since) or missing (never ran) — and its final and best test accuracy (%%) when cached.\nRuns nothing.\n\nFlags:\n%s", name, fs.FlagUsages())
	}
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return &exitError{code: exitInvalid, msg: fmt.Sprintf("fedpipe %s: expected MANIFEST...", name),
			hint: fmt.Sprintf("Run 'fedpipe %s --help' for its flags.", name)}
	}
	fail := func(err error) error { return failure("fedpipe "+name, err) }
	loader := &data.Loader{DataDir: f.data}
	var graphs []*pipeline.Graph
	for _, path := range fs.Args() {
		g, _, err := loadGraphSet(path, f.set, loader, f.backend)
		if err != nil {
			return fail(err)
		}
		graphs = append(graphs, g)
	}
	graphs, err := onlyGraphs(graphs, f.only)
	if err != nil {
		return fail(err)
	}
	store, err := f.reader(fs.Arg(0), stderr) // never creates one, never waits for a run
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	var rows []lsRow
	for _, g := range graphs {
		r, err := listRuns(g, store)
		if err != nil {
			return fail(err)
		}
		if *evals {
			if err := withEvals(r, g, store); err != nil {
				return fail(err)
			}
		}
		rows = append(rows, r...)
	}
	switch {
	case f.json:
		return writeJSON(stdout, map[string]any{"runs": rows})
	case *evals && *asCSV:
		return writeEvalsCSV(stdout, rows)
	case *evals:
		writeEvalsTable(stdout, rows)
		return nil
	case *asCSV:
		return writeLsCSV(stdout, rows)
	}
	writeLsTable(stdout, rows, *withProv)
	return nil
}

// listRuns reads the state and metrics of every run of g.
func listRuns(g *pipeline.Graph, store *artifacts.Store) ([]lsRow, error) {
	plan, err := pipeline.Plan(g, store, &pipeline.LogCapture{})
	if err != nil {
		return nil, err
	}
	var rows []lsRow
	for _, p := range plan {
		n := p.Node
		if n.Kind != manifest.KindEvaluate || n.Run == nil {
			continue
		}
		r := n.Run
		row := lsRow{Manifest: g.Manifest.File, Label: r.Label(), Method: r.MethodName, Seed: r.Seed,
			Params: map[string]string{}, Key: n.Key.String(), State: lsCached}
		for _, a := range r.Vary {
			row.Params[a.Path] = a.Value
		}
		if p.State != pipeline.StateCached {
			row.State, row.Reason = lsStale, p.Reason
			if p.Reason == "never ran" {
				row.State, row.Reason = lsMissing, ""
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
			if row.Intervals, err = cachedIntervals(store, row.Key, s); err != nil {
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

// sweptPaths lists the grid paths of the rows in order of first appearance.
func sweptPaths(rows []lsRow) []string {
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

func sortedParamPaths(r lsRow) []string {
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

func fmtPct(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

// lsHeader and lsCells lay rows out for the table and CSV: identity, swept parameters,
// state, metrics.
func lsHeader(paths []string, multi bool) []string {
	h := []string{"label", "method", "seed"}
	if multi {
		h = append([]string{"manifest"}, h...)
	}
	h = append(h, paths...)
	return append(h, "state", "final_client_mean_pct", "final_pooled_pct", "best_client_mean_pct", "best_pooled_pct")
}

// lsProvHeader and lsProvCells are the provenance columns the CSV (always) and the table
// (with --provenance) add after the metrics.
var lsProvHeader = []string{"fedpipe_version", "commit", "backend", "cpu", "threads", "train_wall_seconds", "peak_rss_bytes", "date"}

func lsProvCells(r lsRow) []string {
	p := r.Provenance
	if p == nil {
		return make([]string, len(lsProvHeader))
	}
	num := func(v int64) string {
		if v == 0 {
			return ""
		}
		return strconv.FormatInt(v, 10)
	}
	return []string{p.Version, p.Commit, p.Backend, p.CPU, num(int64(p.Threads)), strconv.FormatFloat(p.Seconds, 'f', 3, 64), num(p.PeakRSS), p.Date}
}

func lsCells(r lsRow, paths []string, multi bool) []string {
	c := []string{r.Label, r.Method, strconv.FormatInt(r.Seed, 10)}
	if multi {
		c = append([]string{r.Manifest}, c...)
	}
	for _, p := range paths {
		c = append(c, r.Params[p])
	}
	return append(c, r.State, fmtPct(r.FinalMean), fmtPct(r.FinalPooled), fmtPct(r.BestMean), fmtPct(r.BestPooled))
}

func multiManifest(rows []lsRow) bool {
	for _, r := range rows {
		if r.Manifest != rows[0].Manifest {
			return true
		}
	}
	return false
}

func writeLsCSV(w io.Writer, rows []lsRow) error {
	paths, multi := sweptPaths(rows), multiManifest(rows)
	cw := csv.NewWriter(w)
	_ = cw.Write(append(append(lsHeader(paths, multi), lsProvHeader...), lsIntervalHeader...))
	for _, r := range rows {
		_ = cw.Write(append(append(lsCells(r, paths, multi), lsProvCells(r)...), lsIntervalCells(r)...))
	}
	cw.Flush()
	if cw.Error() != nil {
		return exitErr(exitFailure)
	}
	return nil
}

func writeLsTable(w io.Writer, rows []lsRow, prov bool) {
	paths, multi := sweptPaths(rows), multiManifest(rows)
	h := lsHeader(paths, multi)
	for i, p := range paths {
		h[i+3+boolInt(multi)] = manifest.ShortPath(p)
	}
	n := len(h)
	h[n-4], h[n-3], h[n-2], h[n-1] = "final %", "pooled %", "best %", "best pooled %"
	if prov {
		h = append(h, "commit", "backend", "threads", "train s", "peak RSS", "date")
	}
	h = append(h, lsIntervalShortHeader...)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(h, "\t"))
	counts := map[string]int{}
	for _, r := range rows {
		c := lsCells(r, paths, multi)
		for i := n - 4; i < n; i++ {
			if c[i] == "" {
				c[i] = "-"
			}
		}
		if prov {
			c = append(c, lsProvShort(r.Provenance)...)
		}
		c = append(c, lsIntervalShort(r)...)
		fmt.Fprintln(tw, strings.Join(c, "\t"))
		counts[r.State]++
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "%d runs: %d cached, %d stale, %d missing\n", len(rows), counts[lsCached], counts[lsStale], counts[lsMissing])
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// lsProvShort is the provenance as the table shows it: the commit's first 12 characters,
// the wall time in seconds and the peak RSS in MiB; "-" where not recorded.
func lsProvShort(p *pipeline.Provenance) []string {
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
	return []string{dash(p.ShortCommit()), dash(p.Backend), dash(p.ThreadsText()), fmt.Sprintf("%.1f", p.Seconds), rss, dash(p.Date)}
}
