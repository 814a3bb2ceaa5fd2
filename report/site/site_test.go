package site

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/report/chart"
	"github.com/fedpipe/fedpipe/stages"
	"github.com/fedpipe/fedpipe/stages/data"
)

// graphOf builds the stage graph of a manifest given as text.
func graphOf(t *testing.T, src string) *pipeline.Graph {
	t.Helper()
	m, err := manifest.ParseManifest("tiny.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	backend, err := model.ResolveBackend("")
	if err != nil {
		t.Fatal(err)
	}
	g, err := pipeline.Build(m, pipeline.BuildOptions{Describe: (&data.Loader{}).Describe, Backend: model.BackendID(backend)})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// tinyRun runs testdata/tiny.yaml into a fresh store and returns its source, graph and
// store (closed when the test ends).
func tinyRun(t *testing.T) (string, *pipeline.Graph, *artifacts.Store) {
	t.Helper()
	b, err := os.ReadFile("testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g, store := runManifest(t, string(b))
	return string(b), g, store
}

// svgTexts parses an SVG strictly and returns its text nodes (titles, labels, legend
// entries, panel titles), checking that it has no script and loads nothing.
func svgTexts(t *testing.T, name, svg string) []string {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	d.Strict = true
	var texts []string
	depth, inText := 0, false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: SVG is not well-formed XML: %v", name, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 1 && (tok.Name.Local != "svg" || tok.Name.Space != "http://www.w3.org/2000/svg") {
				t.Fatalf("%s: root element is %v, want svg in the SVG namespace", name, tok.Name)
			}
			for _, a := range tok.Attr {
				if a.Name.Local == "href" {
					t.Errorf("%s: external reference %q", name, a.Value)
				}
			}
			if tok.Name.Local == "script" {
				t.Errorf("%s: has a script", name)
			}
			inText = tok.Name.Local == "text"
		case xml.CharData:
			if inText {
				texts = append(texts, string(tok))
			}
		case xml.EndElement:
			depth--
			inText = false
		}
	}
	return texts
}

// svgSeries returns the names of a figure's series (line charts) or panels (heatmaps),
// checking that each is written in its SVG.
func svgSeries(t *testing.T, f *Figure) []string {
	t.Helper()
	var names []string
	switch c := f.Chart.(type) {
	case chart.Line:
		for _, s := range c.Series {
			names = append(names, s.Name)
		}
	case chart.Heatmap:
		for _, p := range c.Panels {
			names = append(names, p.Title)
		}
	case chart.Panels:
		for _, l := range c.Lines {
			for _, s := range l.Series {
				if !slices.Contains(names, s.Name) {
					names = append(names, s.Name)
				}
			}
		}
	default:
		t.Fatalf("%s: chart %T", f.Name, f.Chart)
	}
	texts := svgTexts(t, f.Name, f.SVG)
	for _, n := range names {
		if !slices.Contains(texts, n) {
			t.Errorf("%s: %q is not written in the SVG (texts %q)", f.Name, n, texts)
		}
	}
	return names
}

// pngLink is a link to a figure's file, written beside the page in figures/.
var pngLink = regexp.MustCompile(`^figures/[a-z0-9._-]+\.(svg|png|pdf)$`)

// checkHTML tokenizes the page and checks that every element is closed in order (void
// elements aside), and that nothing is loaded from elsewhere or scripted.
func checkHTML(t *testing.T, page string) {
	t.Helper()
	void := map[string]bool{"meta": true, "br": true, "img": true, "link": true, "hr": true, "input": true}
	z := html.NewTokenizer(strings.NewReader(page))
	var stack []string
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if !errors.Is(z.Err(), io.EOF) {
				t.Fatal(z.Err())
			}
			break
		}
		tok := z.Token()
		switch tt {
		case html.StartTagToken:
			if tok.Data == "script" || tok.Data == "link" || tok.Data == "img" {
				t.Errorf("page has a <%s>: it must be self-contained without scripts", tok.Data)
			}
			for _, a := range tok.Attr {
				// A link may lead to a figure's file, which the report writes beside the page;
				// nothing else is outside it.
				if tok.Data == "a" && a.Key == "href" && pngLink.MatchString(a.Val) {
					continue
				}
				if (a.Key == "src" || a.Key == "href") && !strings.HasPrefix(a.Val, "#") {
					t.Errorf("<%s %s=%q> points outside the page", tok.Data, a.Key, a.Val)
				}
			}
			if !void[tok.Data] {
				stack = append(stack, tok.Data)
			}
		case html.EndTagToken:
			if len(stack) == 0 || stack[len(stack)-1] != tok.Data {
				t.Fatalf("</%s> closes %v", tok.Data, stack)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		t.Fatalf("unclosed elements: %v", stack)
	}
	if _, err := html.Parse(strings.NewReader(page)); err != nil {
		t.Fatal(err)
	}
}

func figure(s *Site, name string) *Figure {
	for i := range s.Figures {
		if s.Figures[i].Name == name {
			return &s.Figures[i]
		}
	}
	return nil
}

func TestReportOfATinyRun(t *testing.T) {
	_, g, store := tinyRun(t)
	s, err := Build(store, g)
	if err != nil {
		t.Fatal(err)
	}
	if s.Runs != 12 || s.Computed != 12 {
		t.Errorf("runs %d computed %d, want 12 and 12", s.Runs, s.Computed)
	}
	checkHTML(t, s.HTML)
	// Legends name methods as their papers do (the method registry's display names).
	rows := []string{"FedAvg", "FedSelect", "FedOBP score=obp q=0.5", "FedOBP score=obp q=0.9",
		"FedOBP score=gradient q=0.5", "FedOBP score=gradient q=0.9"}
	mlp := []string{"fc1.weight", "fc1.bias", "classifier.weight", "classifier.bias"}
	want := map[string][]string{
		"accuracy-rounds":                      rows,
		"score-quantile":                       {"obp", "gradient"},
		"selection-fedselect":                  mlp,
		"mask-iou-fedselect":                   mlp,
		"selection-fedobp_score_obp_q_0.5":     mlp,
		"mask-iou-fedobp_score_gradient_q_0.9": mlp,
		"shift-degree":                         rows,
	}
	for name, series := range want {
		f := figure(s, name)
		if f == nil {
			t.Errorf("no figure %s", name)
			continue
		}
		if got := svgSeries(t, f); !slices.Equal(got, series) {
			t.Errorf("%s: series %q, want %q", name, got, series)
		}
		if !strings.Contains(s.HTML, inlineSVG(f.SVG)) {
			t.Errorf("%s is not inlined in the page", name)
		}
		if !strings.Contains(s.Markdown, "figures/"+name+".svg") {
			t.Errorf("%s is not linked from the markdown", name)
		}
		if png := "figures/" + name + ".png"; !strings.Contains(s.Markdown, "("+png+")") || !strings.Contains(s.HTML, `href="`+png+`"`) {
			t.Errorf("%s's PNG is not linked from the markdown and the page", name)
		}
		if f.Data == nil || f.Data.NumRows() == 0 {
			t.Errorf("%s has no data table", name)
		}
	}
	for i := range s.Figures {
		f := &s.Figures[i]
		svgSeries(t, f)
		if strings.Contains(f.Name, "fedavg") {
			t.Errorf("figure %s: FedAvg has no masks or selections", f.Name)
		}
	}
	// 4 rounds × 6 methods of per-round accuracy; the score sweep's points.
	if n := figure(s, "accuracy-rounds").Data.NumRows(); n != 24 {
		t.Errorf("accuracy-rounds has %d rows, want 24", n)
	}
	if n := figure(s, "score-quantile").Data.NumRows(); n != 4 {
		t.Errorf("score-quantile has %d rows, want 4", n)
	}
	// The verdicts of both expectations appear beside the measured values; fedpipe's own
	// recorded numbers are labelled as such, not as published.
	if !strings.Contains(s.Markdown, "published 50.00 ✓") || !strings.Contains(s.Markdown, "recorded 1.00 ✗") {
		t.Errorf("published values and verdicts missing from the results table:\n%s", s.Markdown)
	}
	// Every method's communication and FLOPs beside FedAvg's (DM-PFL Table 4's layout).
	if !strings.Contains(s.Markdown, "Cost per client") || !strings.Contains(s.Markdown, "| FedAvg | ") ||
		strings.Count(s.Markdown, "(1.00×)") < 3 {
		t.Errorf("the cost table with FedAvg as the 1.00× reference is missing:\n%s", s.Markdown)
	}
	if !strings.Contains(s.HTML, `<td class="fail">`) || !strings.Contains(s.HTML, `<td class="pass">`) {
		t.Error("the page does not mark the pass and the fail")
	}
}

func TestReportShowsWhatIsNotComputed(t *testing.T) {
	src, _, store := tinyRun(t)
	// A third seed and a method that never ran, over the same store.
	src = strings.Replace(src, "seeds: [0, 1]", "seeds: [0, 1, 2]", 1)
	src = strings.Replace(src, "methods:\n", "methods:\n  - name: local\n", 1)
	s, err := Build(store, graphOf(t, src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Runs != 21 || s.Computed != 12 {
		t.Errorf("runs %d computed %d, want 21 and 12", s.Runs, s.Computed)
	}
	if !strings.Contains(s.Markdown, "| Local | not computed |") {
		t.Errorf("the local row is not marked not computed:\n%s", s.Markdown)
	}
	if !regexp.MustCompile(`[0-9.]+ ± [0-9.]+ \(n=2 of 3\)`).MatchString(s.Markdown) {
		t.Errorf("cells missing a seed do not say so:\n%s", s.Markdown)
	}
	for _, f := range s.Figures {
		if strings.Contains(f.Name, "local") {
			t.Errorf("figure %s drawn without data", f.Name)
		}
		if f.Name == "accuracy-rounds" && slices.Contains(svgSeries(t, &f), "local") {
			t.Error("accuracy-rounds has a series for a method that never ran")
		}
	}
	checkHTML(t, s.HTML)
}

func TestEmptyStoreGivesAPageWithoutFigures(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "tiny.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := artifacts.Open(t.TempDir(), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s, err := Build(store, graphOf(t, string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Computed != 0 || len(s.Figures) != 0 {
		t.Errorf("computed %d, %d figures; want none", s.Computed, len(s.Figures))
	}
	if strings.Count(s.Markdown, "not computed") < 6 {
		t.Errorf("cells not marked not computed:\n%s", s.Markdown)
	}
	checkHTML(t, s.HTML)
}

// runManifest runs a manifest given as text into a fresh store.
func runManifest(t *testing.T, src string) (*pipeline.Graph, *artifacts.Store) {
	t.Helper()
	g := graphOf(t, src)
	store, err := artifacts.Open(t.TempDir(), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	plan, err := pipeline.Plan(g, store, &pipeline.LogCapture{})
	if err != nil {
		t.Fatal(err)
	}
	backend, _ := model.ResolveBackend("")
	ex := &pipeline.Executor{Store: store, Stages: pipeline.StageFuncs(stages.Funcs(&stages.Env{Loader: &data.Loader{}, Backend: backend})),
		Progress: pipeline.Quiet{}}
	if _, err := ex.Execute(context.Background(), g, plan); err != nil {
		t.Fatal(err)
	}
	return g, store
}

// The manifest grid's cells are the results table's columns (as a paper's datasets or
// partitions); a method's own grid stays in its row label; the cells are the panels of one figure.
func TestResultsAreMethodsByGridCells(t *testing.T) {
	g, store := runManifest(t, `name: grid
dataset: {name: synthetic, devices: 4}
partition: {scheme: natural}
model: {arch: mlp, hidden: [8]}
train: {rounds: 2, lr: 0.05}
grid: {train.local_epochs: [1, 2]}
methods:
  - name: fedavg
  - name: local
    grid: {train.lr: [0.05, 0.1]}
`)
	s, err := Build(store, g)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(s.Markdown, "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "| method |") })
	if i < 0 {
		t.Fatalf("no results table:\n%s", s.Markdown)
	}
	if lines[i] != "| method | local_epochs=1 | local_epochs=2 |" {
		t.Errorf("header %q", lines[i])
	}
	for k, row := range []string{"FedAvg", "Local lr=0.05", "Local lr=0.1"} { // display names, with the row's grid choices
		cells := strings.Split(lines[i+2+k], " | ")
		if len(cells) != 3 || cells[0] != "| "+row || !strings.Contains(cells[1], "(n=1)") || !strings.Contains(cells[2], "(n=1)") ||
			strings.Contains(lines[i+2+k], "±") {
			t.Errorf("row %d: %q, want %s with a value in both cells and no spread for one seed", k, lines[i+2+k], row)
		}
	}
	// Issue 46: the grid's cells are the panels of one figure, whose caption says the
	// manifest's setting and names the cells, and which has no title of its own.
	f := figure(s, "accuracy-rounds")
	if f == nil {
		t.Fatalf("no figure accuracy-rounds among %d", len(s.Figures))
	}
	if got := svgSeries(t, f); !slices.Equal(got, []string{"FedAvg", "Local lr=0.05", "Local lr=0.1"}) {
		t.Errorf("accuracy-rounds: series %q", got)
	}
	texts := svgTexts(t, f.Name, f.SVG)
	if !slices.Contains(texts, "local_epochs=1") || !slices.Contains(texts, "local_epochs=2") || slices.Contains(texts, f.Title) {
		t.Errorf("accuracy-rounds: panels not labelled by cell, or a title drawn in the figure: %q", texts)
	}
	for _, want := range []string{"Manifest " + g.Manifest.Name + ":", "Synthetic", "2 rounds", "1 seed", "(local_epochs=1; local_epochs=2)"} {
		if !strings.Contains(f.Caption, want) {
			t.Errorf("caption %q does not say %q", f.Caption, want)
		}
	}
	if strings.Contains(f.Caption, "FedSelect Fig.") {
		t.Errorf("caption %q cites a paper's figure this manifest is not", f.Caption)
	}
	for _, other := range s.Figures {
		if strings.HasPrefix(other.Name, "accuracy-rounds-") {
			t.Errorf("a figure per cell beside the combined one: %s", other.Name)
		}
	}
	// The page: results, then figures, then the runs' details; provenance last, folded.
	res, figs, runs := strings.Index(s.HTML, ">Results</h2>"), strings.Index(s.HTML, `<h2 id="figures">`), strings.Index(s.HTML, ">Runs</h2>")
	if res < 0 || figs < 0 || runs < 0 || !(res < figs && figs < runs) {
		t.Errorf("page order: results at %d, figures at %d, runs at %d; want results, figures, runs", res, figs, runs)
	}
	prov := strings.Index(s.HTML, ">Provenance</h2>")
	if open := strings.LastIndex(s.HTML[:max(prov, 0)], "<details"); prov < 0 || open < 0 || prov < runs || strings.Contains(s.HTML[open:prov], "</details>") {
		t.Errorf("provenance (at %d) is not last and folded in <details>", prov)
	}
}

// A sweep draws at most maxRunFigures per-configuration figures of a kind and says so;
// the score-vs-quantile figure still covers every q.
func TestLargeSweepIsCapped(t *testing.T) {
	g, store := runManifest(t, `name: sweep
dataset: {name: synthetic, devices: 3}
partition: {scheme: natural}
model: {arch: mlp, hidden: [4]}
train: {rounds: 1, lr: 0.05}
methods:
  - name: fedobp
    grid: {params.q: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.995, 0.999]}
`)
	s, err := Build(store, g)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, f := range s.Figures {
		kind, _, _ := strings.Cut(f.Name, "-fedobp")
		count[kind]++
	}
	if count["selection"] != maxRunFigures || count["mask-iou"] != maxRunFigures {
		t.Errorf("figures per kind %v, want %d selections and mask IoUs", count, maxRunFigures)
	}
	if len(s.Notes) != 2 || !strings.Contains(s.Notes[0], "first 12 of 13") {
		t.Errorf("notes %q", s.Notes)
	}
	if !strings.Contains(s.HTML, html.EscapeString(s.Notes[0])) {
		t.Error("the page does not say which figures were left out")
	}
	if f := figure(s, "score-quantile"); f == nil || f.Data.NumRows() != 13 {
		t.Errorf("score-quantile figure missing or short: %+v", f)
	}
}

// Several manifests (a paper table's columns) share one page: each is a column group
// labelled by its name less the shared prefix, methods are merged into rows, and each
// column's published value and verdict come from its own manifest.
func TestSeveralManifestsAreColumns(t *testing.T) {
	src := func(name string, alpha, published float64) string {
		return fmt.Sprintf(`name: %s
dataset: {name: synthetic, devices: 4, alpha: %v}
partition: {scheme: natural}
model: {arch: mlp, hidden: [8]}
train: {rounds: 2, lr: 0.05}
methods:
  - name: fedavg
  - name: local
expect:
  - {method: local, metric: final_client_mean, published: %v, tolerance: 100, source: test}
`, name, alpha, published)
	}
	g1, store := runManifest(t, src("paper-table1-easy", 0.5, 11))
	g2 := graphOf(t, src("paper-table1-hard", 1.0, 22))
	s, err := Build(store, g1, g2) // the hard column was never run
	if err != nil {
		t.Fatal(err)
	}
	if s.Title != "paper-table1" || s.Runs != 4 || s.Computed != 2 {
		t.Errorf("title %q, %d of %d runs computed; want paper-table1, 2 of 4", s.Title, s.Computed, s.Runs)
	}
	lines := strings.Split(s.Markdown, "\n")
	i := slices.Index(lines, "| method | easy | hard |")
	if i < 0 {
		t.Fatalf("no easy/hard results table:\n%s", s.Markdown)
	}
	if !strings.HasPrefix(lines[i+2], "| FedAvg | ") || !strings.HasSuffix(lines[i+2], " | not computed |") {
		t.Errorf("fedavg row %q", lines[i+2])
	}
	if !strings.Contains(lines[i+3], "published 11.00 ✓ | not computed |") {
		t.Errorf("local row %q: want easy's own published value, hard not computed", lines[i+3])
	}
	if !strings.Contains(s.Markdown, "| local | easy local | final_client_mean |") || !strings.Contains(s.Markdown, "| local | hard local | final_client_mean | 22.00") {
		t.Errorf("verification rows do not name their manifest:\n%s", s.Markdown)
	}
	if f := figure(s, "accuracy-rounds-easy"); f == nil || figure(s, "accuracy-rounds-hard") != nil {
		t.Errorf("want a per-round figure for the easy column only")
	}
	checkHTML(t, s.HTML)
}
