package site

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/results/summary"
	"github.com/fedpipe/fedpipe/stats"
	"github.com/fedpipe/fedpipe/verify"
)

// Site is a report ready to be written: the page in two formats, the figures and the
// tables behind them.
type Site struct {
	Title    string
	Markdown string
	HTML     string
	Figures  []Figure
	// Tables are the numbers of the page's tables (results, runs), by file name.
	Tables []NamedTable
	// Runs and Computed count the manifest's runs and those with a cached evaluation.
	Runs, Computed int
	// Provenance is each cached run's provenance, as the page's provenance table shows it.
	Provenance []ProvenanceRow
	// Notes say which figures were left out of a large report, and which manifests share a
	// name (their columns are then labelled by file).
	Notes []string
	// Formats are the figure files the page and the markdown link to (Options.Formats).
	Formats []string

	graphs []*pipeline.Graph
}

// NamedTable is a table with the file name (no extension) it is written under.
type NamedTable struct {
	Name  string
	Table *table.Table
}

// DefaultFormats are the figure files a report writes unless told otherwise: SVG (also
// inlined in the page) and PNG for slides.
var DefaultFormats = []string{"svg", "png"}

// Options say which figure files the page links to.
type Options struct {
	// Formats are the figure files written beside the page, a subset of chart.Formats in
	// any order; empty: DefaultFormats.
	Formats []string
	// CompareOver is the unit the results table's significance marks pair methods over:
	// stats.Seeds (the default when empty) or stats.Clients.
	CompareOver stats.Unit
}

// Build is BuildWith with the default options.
func Build(store *artifacts.Store, graphs ...*pipeline.Graph) (*Site, error) {
	return BuildWith(Options{}, store, graphs...)
}

// BuildWith reads the cached results of the graphs' stages from store and lays them out.
// With several graphs (say, the manifests of one paper table's columns), each manifest's
// runs form their own columns, labelled by its name less the prefix the names share. It
// runs nothing and writes nothing; it draws each figure's SVG, which the page inlines.
func BuildWith(opt Options, store *artifacts.Store, graphs ...*pipeline.Graph) (*Site, error) {
	formats, err := figureFormats(opt.Formats)
	if err != nil {
		return nil, err
	}
	if len(graphs) == 0 {
		return nil, fmt.Errorf("site: no manifest to report on")
	}
	names := make([]string, len(graphs))
	for i, g := range graphs {
		names[i] = g.Manifest.Name
	}
	label := make([]string, len(graphs))
	title := names[0]
	var notes []string
	if len(graphs) > 1 {
		prefix := commonPrefix(names)
		title = strings.TrimRight(prefix, "-_ ")
		for i, n := range names {
			if label[i] = strings.TrimPrefix(n, prefix); label[i] == "" {
				label[i] = n
			}
		}
		if title == "" {
			title = strings.Join(names, ", ")
		}
		notes = distinctLabels(graphs, label)
	}
	c, err := collect(graphs, label, store)
	if err != nil {
		return nil, err
	}
	m := graphs[0].Manifest
	metric := primaryMetric(m)
	s := &Site{Title: title, graphs: graphs, Notes: notes, Formats: formats}
	for _, x := range c.runs {
		s.Runs++
		if x.summary != nil {
			s.Computed++
		}
	}
	var sections []section
	unit := opt.CompareOver
	if unit == "" {
		unit = stats.Seeds
	}
	resGrid, resTable := c.results(metric, unit)
	sections = append(sections, section{title: "Results", intro: fmt.Sprintf(
		"%s, in percent: mean ± population std over seeds (NumPy's std, as the papers report theirs; n = seeds computed) and a 95 %% interval. Where the manifest records a published value it is shown beside the measured one, with the verdict of `fedpipe verify`. %s",
		capital(metricLabel(metric)), significanceNote(unit)), grids: []grid{resGrid}})
	s.Tables = append(s.Tables, NamedTable{"results", resTable})
	if grids, rows := c.pairwise(metric, unit); len(grids) > 0 {
		sections = append(sections, section{title: "Paired comparisons", intro: pairwiseIntro(metric, unit), grids: grids})
		s.Tables = append(s.Tables, NamedTable{"pairwise", dataTable(rows)})
	}
	if len(c.checks) > 0 {
		sections = append(sections, section{title: "Verification", intro: "Every `expect` entry of the manifest on every cell: expected vs measured (mean ± population std over seeds), the difference and the verdict.",
			grids: []grid{verifyGrid(c.checks)}})
	}
	if len(c.claims) > 0 {
		sections = append(sections, section{title: "Claims", intro: claimsIntro, grids: []grid{claimsGrid(c.claims)}})
	}
	var entries []summary.Entry
	for _, x := range c.runs {
		if x.summary != nil {
			entries = append(entries, summary.Entry{Run: x.r.Label(), Config: x.config, Display: manifest.DisplayLabel(x.config, x.r.Method), Method: x.r.Method, Seed: x.r.Seed, Summary: *x.summary})
		}
	}
	if len(entries) > 0 {
		sections = append(sections, section{details: true, title: "Runs", intro: "Every computed configuration, seeds folded (each figure a mean over seeds): final accuracy as the client mean ± std over clients, and pooled over all test samples ± std over seeds where there are several, and the best pooled accuracy at the evaluation rounds.",
			grids: []grid{runsGrid(entries)}})
		s.Tables = append(s.Tables, NamedTable{"runs", dataTable(summary.Runs(entries))})
	}
	shiftGrids, err := c.shiftGrids()
	if err != nil {
		return nil, err
	}
	if g := shiftGrids; len(g) > 0 {
		sections = append(sections, section{details: true, title: "Accuracy under test-time shift", intro: "Mean ± std over clients, averaged over seeds (DM-PFL Table 1 and Fig. 4).", grids: g})
	}
	var costs []summary.CostEntry
	for _, x := range c.runs {
		if x.cost != nil {
			costs = append(costs, *x.cost)
		}
	}
	if g, ok := summary.CostGrid(costs); ok {
		sections = append(sections, section{details: true, title: "Communication and computation",
			intro: "Per client over the whole run, averaged over clients and seeds: megabytes received and sent, and training FLOPs (DM-PFL Table 4).",
			grids: []grid{fromReportGrid(g)}})
	}
	sections = c.addProvenance(s, sections) // last: the page puts it after the figures, folded
	s.Figures = append(s.Figures, c.accuracyRounds()...)
	s.Figures = append(s.Figures, c.scoreQuantile(metric)...)
	s.Figures = append(s.Figures, c.selection(&s.Notes)...)
	s.Figures = append(s.Figures, c.maskIoU(&s.Notes)...)
	s.Figures = append(s.Figures, c.shifts()...)
	for i := range s.Figures {
		f := &s.Figures[i]
		svg, err := f.Chart.Render("svg")
		if err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.Name, err)
		}
		f.SVG = string(svg)
	}
	s.Markdown = s.markdown(sections)
	s.HTML = s.html(sections)
	return s, nil
}

// distinctLabels makes the manifests' column labels distinct, so that two manifests sharing
// a name (a copied YAML) are never folded together as if their runs were seeds of one
// configuration: a clashing label becomes the manifest's file name (without extension),
// else its path, else its position. It returns a note per clash.
func distinctLabels(graphs []*pipeline.Graph, label []string) []string {
	var notes []string
	byLabel := map[string][]int{}
	for i, l := range label {
		byLabel[l] = append(byLabel[l], i)
	}
	for i, l := range label {
		same := byLabel[l]
		if len(same) < 2 || same[0] != i {
			continue
		}
		var files []string
		for _, j := range same {
			files = append(files, graphs[j].Manifest.File)
		}
		notes = append(notes, fmt.Sprintf("manifests %s share the name %q: their runs are kept apart, labelled by file",
			strings.Join(files, ", "), graphs[i].Manifest.Name))
	}
	for _, pick := range []func(int) string{
		func(i int) string {
			b := filepath.Base(graphs[i].Manifest.File)
			return strings.TrimSuffix(b, filepath.Ext(b))
		},
		func(i int) string { return graphs[i].Manifest.File },
		func(i int) string { return fmt.Sprintf("%s#%d", label[i], i+1) },
	} {
		count := map[string]int{}
		for _, l := range label {
			count[l]++
		}
		if len(count) == len(label) {
			break
		}
		for i, l := range label {
			if count[l] > 1 {
				label[i] = pick(i)
			}
		}
	}
	return notes
}

// commonPrefix returns the longest prefix of every name, cut back to a word boundary
// ("-", "_" or " ") so that labels stay whole words.
func commonPrefix(names []string) string {
	p := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, p) {
			p = p[:len(p)-1]
		}
	}
	if i := strings.LastIndexAny(p, "-_ "); i >= 0 {
		return p[:i+1]
	}
	return ""
}

// description is the manifests' description (one manifest) or the list of their names.
func (s *Site) description() string {
	if len(s.graphs) == 1 {
		return s.graphs[0].Manifest.EffectiveDescription()
	}
	var d []string
	for _, g := range s.graphs {
		d = append(d, g.Manifest.Name)
	}
	return fmt.Sprintf("%d manifests, one column group each: %s.", len(s.graphs), strings.Join(d, ", "))
}

// files lists the manifests' paths.
func (s *Site) files() string {
	var f []string
	for _, g := range s.graphs {
		f = append(f, g.Manifest.File)
	}
	return strings.Join(f, ", ")
}

// primaryMetric is the metric of the manifest's first expectation with a published
// value (the paper's own), else the final accuracy as a mean over clients (FedSelect's).
func primaryMetric(m *manifest.Manifest) string {
	for _, e := range m.Expect {
		if e.Above == "" {
			return e.Metric
		}
	}
	if len(m.Expect) > 0 {
		return m.Expect[0].Metric
	}
	return "final_client_mean"
}

func metricLabel(metric string) string {
	switch metric {
	case "final_client_mean":
		return "final-round test accuracy, mean over clients"
	case "best_client_mean":
		return "best test accuracy over the evaluation rounds, mean over clients"
	case "best_pooled":
		return "best test accuracy over the evaluation rounds, pooled over all clients' test samples"
	}
	return "final-round test accuracy, pooled over all clients' test samples"
}

func capital(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// value reads a metric in percent.
func value(s summary.Summary, metric string) float64 { return summary.Value(s, metric) }

type section struct {
	title, intro string
	grids        []grid
	// details are the page's sections after its figures (the results and their
	// verification come first); collapsed ones (provenance) are folded until opened.
	details, collapsed bool
}

// results lays the primary metric out as methods × cells of the manifest's grid.
func (c *collected) results(metric string, unit stats.Unit) (grid, *table.Table) {
	marks := c.marks(metric, unit)
	g := grid{head: []string{"method"}}
	for _, col := range c.cols {
		if col == "" {
			col = "accuracy (%)"
		}
		g.head = append(g.head, col)
	}
	var data []resultCell
	for _, row := range c.rows {
		line := []cell{{text: c.display(row)}}
		for _, col := range c.cols {
			var vals []float64
			total := 0
			var checks []verify.Cell
			for _, x := range c.runs {
				if x.row == row && x.col == col {
					total++
					checks = x.checks
					if x.summary != nil {
						if v := value(*x.summary, metric); !math.IsNaN(v) { // NaN: an _ft metric of a run without fine-tuning
							vals = append(vals, v)
						}
					}
				}
			}
			if total == 0 {
				line = append(line, cell{text: "", class: ""})
				continue
			}
			if len(vals) == 0 {
				line = append(line, cell{text: "not computed", class: "missing"})
				nan := math.NaN() // not computed: missing, an empty CSV field
				data = append(data, resultCell{Method: row, Display: c.display(row), Cell: col, Mean: nan, Std: nan, Published: nan, Verdict: verify.Missing,
					StdSample: nan, CILo: nan, CIHi: nan, PBest: nan})
				continue
			}
			text := fmt.Sprintf("%.2f", summary.Mean(vals))
			if len(vals) > 1 { // one seed has no spread to show
				text += fmt.Sprintf(" ± %.2f", summary.Std(vals))
			}
			n := fmt.Sprint(len(vals))
			if len(vals) < total {
				n += fmt.Sprintf(" of %d", total)
			}
			text += " (n=" + n + ")"
			iv := c.interval(row, col, metric, vals)
			text += iv.text
			mk := marks[[2]string{row, col}]
			if mk.vs == vsNotSig {
				text += " †"
			}
			class, verdict, pub := "", "", math.NaN() // no published value: missing
			for _, v := range checks {
				if v.Above != "" || v.Metric != metric {
					continue
				}
				// fedpipe's own recorded numbers (CI manifests) are not a paper's.
				label := "published"
				if strings.HasPrefix(v.Source, "fedpipe") {
					label = "recorded"
				}
				text += fmt.Sprintf(" · %s %.2f", label, v.Published)
				if v.Std > 0 {
					text += fmt.Sprintf(" ± %.2f", v.Std)
				}
				pub, verdict = v.Published, v.Verdict
				switch v.Verdict {
				case verify.Pass:
					text += " ✓"
					class = "pass"
				case verify.Fail:
					text += fmt.Sprintf(" ✗ (%+.2f)", v.Diff)
					class = "fail"
				}
				break
			}
			line = append(line, cell{text: text, class: class, bold: mk.best})
			data = append(data, resultCell{Method: row, Display: c.display(row), Cell: col, Seeds: len(vals), Mean: summary.Mean(vals), Std: summary.Std(vals),
				Published: pub, Verdict: verdict, StdSample: stats.SampleStd(vals), CILo: iv.lo, CIHi: iv.hi, Interval: iv.kind,
				VsBest: mk.vs, PBest: mk.p, CompareOver: string(unit)})
		}
		g.rows = append(g.rows, line)
	}
	t := dataTable(data)
	t.Meta = map[string]string{"metric": metric, "std": "population (ddof = 0) over seeds", "compare_over": string(unit),
		"significance": significanceNote(unit)}
	return g, t
}

func verdictClass(v string) string {
	switch v {
	case verify.Pass:
		return "pass"
	case verify.Fail:
		return "fail"
	}
	return "missing"
}

func verifyGrid(cells []verify.Cell) grid {
	g := grid{head: []string{"method", "cell", "metric", "expected", "measured (mean ± std over seeds)", "diff", "verdict", "source"}, text: 3}
	for _, c := range cells {
		var row []cell
		for _, s := range c.Row() {
			row = append(row, cell{text: s})
		}
		row[6].class = verdictClass(c.Verdict)
		g.rows = append(g.rows, append(row, cell{text: c.Source}))
	}
	return g
}

func runsGrid(entries []summary.Entry) grid {
	g := grid{head: []string{"configuration", "seeds", "clients", "final, client mean ± std over clients", "final, pooled (± std over seeds)", "best pooled @ round of each seed", "after fine-tuning: final / best pooled"}}
	for _, r := range summary.Rows(entries) {
		g.rows = append(g.rows, cells(r.Cells()))
	}
	return g
}

// shiftGrids lays accuracy under shift out as the report stage does (summary.ShiftGrids):
// DM-PFL Table 1's columns of shift degrees, and a column per corruption severity.
func (c *collected) shiftGrids() ([]grid, error) {
	var entries []summary.ShiftEntry
	for _, x := range c.runs {
		if x.shift == nil {
			continue
		}
		e := *x.shift
		e.Config, e.Display = x.config, manifest.DisplayLabel(x.config, x.r.Method)
		entries = append(entries, e)
	}
	var out []grid
	for _, g := range summary.ShiftGrids(entries) {
		out = append(out, fromReportGrid(g))
	}
	return out, nil
}

// fromReportGrid turns a report stage's Grid into the page's.
func fromReportGrid(g summary.Grid) grid {
	gg := grid{caption: g.Title, head: g.Head, text: g.Text}
	for _, r := range g.Rows {
		gg.rows = append(gg.rows, cells(r))
	}
	return gg
}

func (s *Site) markdown(sections []section) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", s.Title)
	if d := s.description(); d != "" {
		fmt.Fprintf(&b, "%s\n\n", d)
	}
	fmt.Fprintf(&b, "Manifest `%s`: %d of %d runs computed.\n\n", s.files(), s.Computed, s.Runs)
	for _, sec := range sections {
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", sec.title, sec.intro)
		for _, g := range sec.grids {
			g.markdown(&b)
		}
	}
	if len(s.Figures) > 0 {
		b.WriteString("## Figures\n\n")
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "%s\n\n", n)
		}
		for _, f := range s.Figures {
			fmt.Fprintf(&b, "### %s\n\n", f.Title)
			if img := s.pageImage(); img != "" {
				fmt.Fprintf(&b, "![%s](figures/%s.%s)\n\n", f.Title, f.Name, img)
			}
			fmt.Fprintf(&b, "%s Data: `tables/%s.csv`.%s\n\n", f.Caption, f.Name, s.fileLinks(f.Name, true))
		}
	}
	return b.String()
}

// dataTable lays rows of a results row type out as a table for tables/ and data/. Their
// schemas are fixed and checked by the results package's tests, so an error here is a
// bug.
func dataTable[T any](rows []T) *table.Table {
	t, err := results.ToTable(rows, nil)
	if err != nil {
		panic(err)
	}
	return t
}
