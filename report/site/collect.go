// Package site builds `fedpipe report`'s output from a manifest's cached results: a
// self-contained HTML page (inline CSS and SVG, no scripts), the same content as markdown,
// each figure as its own SVG file, and the data behind every table and figure as tables to
// be written as Parquet and CSV. It runs nothing: cells whose stages are not in the store
// are shown as not computed, and a figure appears only when its data exist.
package site

import (
	"fmt"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/results/summary"
	"github.com/fedpipe/fedpipe/verify"
)

// run is what the store holds for one run (one seed of one configuration).
type run struct {
	r *manifest.Run
	// row labels the method and its own grid choices; col the manifest (when the report
	// covers several) and its grid's choices.
	row, col string
	// config names the configuration (r.Config(), after the manifest's label when the
	// report covers several).
	config string
	// checks are the verify cells of this configuration.
	checks  []verify.Cell
	summary *results.Summary // nil: not computed
	// entry is what the report's tables (summary.Tables) read of the run: its labels, its
	// summary and cost, its shift summary.
	entry   summary.Entry
	metrics []results.Metric
	sel     []results.Selection
	iou     []results.MaskIoU
	// prov is the provenance recorded with the run's train stage (nil: none).
	prov *pipeline.Provenance
	// clients are the evaluate stage's per-client final results, in client order (nil: not
	// computed).
	clients []results.Client
}

// collected is every run of the manifests in graph order.
type collected struct {
	runs []*run
	// rows and cols in order of first appearance.
	rows, cols []string
	// checks are every manifest's verify cells, configurations labelled as run.config.
	checks []verify.Cell
	// claims are every manifest's claim verdicts, configurations labelled as checks'.
	claims []verify.ClaimVerdict
	// manifests are the manifests' names, in order.
	manifests []string
}

// cached returns the cached result of node n; ok is false when it has not run.
func cached(store *artifacts.Store, n *pipeline.Node) (a artifacts.Action, ok bool, err error) {
	a, err = results.Action(store, artifacts.Digest(n.Key))
	if results.Missing(err) {
		return a, false, nil
	}
	return a, err == nil, err
}

// readRows decodes output name of a cached action as rows of T; ok is false when the
// output is absent or unreadable (a corrupt blob is a miss, as everywhere in fedpipe).
func readRows[T any](store *artifacts.Store, a artifacts.Action, name string) (rows []T, meta map[string]string, ok bool, err error) {
	rows, meta, err = results.ReadFrom[T](store, a, name)
	if results.Missing(err) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("output %s: %w", name, err)
	}
	return rows, meta, true, nil
}

// labels splits a run's grid choices into those of the manifest's grid (the columns of
// the results table) and the method's own (part of its row label).
func labels(r *manifest.Run, topAxes int) (row, col string) {
	rowParts := []string{r.MethodName}
	var colParts []string
	for i, a := range r.Vary {
		s := shortName(a.Path) + "=" + a.Value
		if i < topAxes {
			colParts = append(colParts, s)
		} else {
			rowParts = append(rowParts, s)
		}
	}
	return strings.Join(rowParts, " "), strings.Join(colParts, " ")
}

func shortName(path string) string {
	sec, field, _ := strings.Cut(path, ".")
	if field == "name" {
		return sec
	}
	return field
}

// topAxes counts the manifest-level grid axes, which expansion puts first in Run.Vary.
func topAxes(m *manifest.Manifest) int {
	return len(m.Grid.Content) / 2
}

// joinLabel joins non-empty labels with a space.
func joinLabel(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

// collect reads every run's cached evaluate summary, train tables, shift summary and
// verify cells, for each graph; label[i] names graph i's runs ("" for a single manifest).
func collect(graphs []*pipeline.Graph, label []string, store *artifacts.Store) (*collected, error) {
	c := &collected{}
	seenRow, seenCol := map[string]bool{}, map[string]bool{}
	for i, g := range graphs {
		c.manifests = append(c.manifests, g.Manifest.Name)
		if err := c.add(g, label[i], store, seenRow, seenCol); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// add collects one graph's runs.
func (c *collected) add(g *pipeline.Graph, label string, store *artifacts.Store, seenRow, seenCol map[string]bool) error {
	byRun := map[*manifest.Run]*run{}
	top := topAxes(g.Manifest)
	checks := map[string][]verify.Cell{}
	if len(g.Manifest.Expect) > 0 {
		cells, err := verify.Verify(g, store)
		if err != nil {
			return err
		}
		for _, v := range cells {
			checks[v.Config] = append(checks[v.Config], v)
			v.Config = joinLabel(label, v.Config)
			c.checks = append(c.checks, v)
		}
	}
	if len(g.Manifest.Claims) > 0 {
		vs, err := verify.Claims([]*pipeline.Graph{g}, store)
		if err != nil {
			return err
		}
		for _, v := range vs {
			v.Config = joinLabel(label, v.Config)
			c.claims = append(c.claims, v)
		}
	}
	get := func(r *manifest.Run) *run {
		if x, ok := byRun[r]; ok {
			return x
		}
		x := &run{r: r, config: joinLabel(label, r.Config()), checks: checks[r.Config()]}
		x.entry = summary.EntryOf(r, x.config)
		x.row, x.col = labels(r, top)
		x.col = joinLabel(label, x.col)
		if !seenRow[x.row] {
			seenRow[x.row] = true
			c.rows = append(c.rows, x.row)
		}
		if !seenCol[x.col] {
			seenCol[x.col] = true
			c.cols = append(c.cols, x.col)
		}
		byRun[r] = x
		c.runs = append(c.runs, x)
		return x
	}
	for _, n := range g.Nodes {
		if n.Run == nil || (n.Kind != manifest.KindEvaluate && n.Kind != manifest.KindTrain && n.Kind != manifest.KindShift) {
			continue
		}
		outs, done, err := cached(store, n)
		if err != nil {
			return err
		}
		// A stage shared by identical method labels serves each of their runs.
		for _, r := range n.RunsOf() {
			x := get(r)
			if !done {
				continue
			}
			switch n.Kind {
			case manifest.KindEvaluate:
				rows, meta, ok, err := readRows[results.Summary](store, outs, results.OutEvaluateSummary)
				if err != nil || !ok {
					return wrap(n, err)
				}
				if len(rows) != 1 {
					return wrap(n, fmt.Errorf("summary table has %d rows, want 1", len(rows)))
				}
				x.summary = &rows[0]
				x.entry.SetSummary(rows[0], meta)
				if x.clients, _, _, err = readRows[results.Client](store, outs, results.OutEvaluateClients); err != nil {
					return wrap(n, err)
				}
			case manifest.KindTrain:
				if p, ok, err := pipeline.StageProvenance(store, n); err != nil {
					return wrap(n, err)
				} else if ok {
					x.prov = &p
				}
				if x.metrics, _, _, err = readRows[results.Metric](store, outs, results.OutTrainMetrics); err != nil {
					return wrap(n, err)
				}
				if x.sel, _, _, err = readRows[results.Selection](store, outs, results.OutTrainSelection); err != nil {
					return wrap(n, err)
				}
				if x.iou, _, _, err = readRows[results.MaskIoU](store, outs, results.OutTrainMaskIoU); err != nil {
					return wrap(n, err)
				}
			case manifest.KindShift:
				rows, _, ok, err := readRows[results.ShiftSummary](store, outs, results.OutShiftSummary)
				if err != nil {
					return wrap(n, err)
				}
				if ok {
					x.entry.SetShift(rows)
				}
			}
		}
	}
	return nil
}

func wrap(n *pipeline.Node, err error) error {
	if err == nil {
		return fmt.Errorf("%s: cached result has no summary", n.Name)
	}
	return fmt.Errorf("%s: %w", n.Name, err)
}
