package folder

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/report/site"
	"github.com/fedpipe/fedpipe/results/summary"
	"github.com/fedpipe/fedpipe/stages"
	"github.com/fedpipe/fedpipe/stages/data"
)

// seedsRow is a row of the table TestAddATable adds.
type seedsRow struct {
	Method string `arrow:"method"`
	Seeds  int    `arrow:"seeds"`
}

// seedsTable is the table TestAddATable adds: the evaluated seeds of each method.
func seedsTable(entries []summary.Entry) summary.Layout {
	var rows []seedsRow
	for _, e := range entries {
		if !e.Evaluated {
			continue
		}
		i := slices.IndexFunc(rows, func(r seedsRow) bool { return r.Method == e.Display })
		if i < 0 {
			rows, i = append(rows, seedsRow{Method: e.Display}), len(rows)
		}
		rows[i].Seeds++
	}
	g := summary.Grid{Title: "Seeds evaluated per method", Head: []string{"method", "seeds"}, Text: 1}
	for _, r := range rows {
		g.Rows = append(g.Rows, []string{r.Method, strconv.Itoa(r.Seeds)})
	}
	return summary.Layout{Grids: []summary.Grid{g}, Data: summary.DataTable(rows, nil)}
}

// Adding a report table is one function and one entry in summary.Tables: the report
// stage's report.md and its data table (as export writes them), the page, its markdown,
// tables/ and the LaTeX all carry it.
func TestAddATable(t *testing.T) {
	saved := summary.Tables
	t.Cleanup(func() { summary.Tables = saved })
	summary.Tables = append(slices.Clip(summary.Tables), summary.Table{Name: "seeds", Title: "Seeds", LaTeX: true,
		Intro: "How many seeds of each method were evaluated.", Build: seedsTable})

	m, err := manifest.ParseManifest("two.yaml", []byte(`name: two-methods
seeds: [0, 1]
dataset: {name: synthetic, devices: 4}
partition: {scheme: natural}
model: {arch: logreg}
train: {rounds: 1}
methods:
  - name: fedavg
  - name: local
`))
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
	store, err := artifacts.Open(t.TempDir(), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	plan, err := pipeline.Plan(g, store, &pipeline.LogCapture{})
	if err != nil {
		t.Fatal(err)
	}
	ex := &pipeline.Executor{Store: store, Stages: pipeline.StageFuncs(stages.Funcs(&stages.Env{Loader: &data.Loader{}, Backend: backend})),
		Progress: pipeline.Quiet{}}
	if _, err := ex.Execute(context.Background(), g, plan); err != nil {
		t.Fatal(err)
	}
	s, err := site.Build(store, g)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report")
	if _, err := Write(out, s, []*pipeline.Graph{g}, store, true); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		return string(b)
	}
	for name, want := range map[string][]string{
		// The report stage's report.md and data table, as `fedpipe export` writes them.
		"data/report.md":        {"\n### Seeds evaluated per method\n\n| method | seeds |\n|---|---:|\n| FedAvg | 2 |\n| Local | 2 |\n"},
		"data/report/seeds.csv": {"method,seeds,manifest,stage,", "\nFedAvg,2,two-methods,report,", "\nLocal,2,two-methods,report,"},
		// The page, its markdown and its tables.
		"index.html":       {`">Seeds</h2>`, "<caption>Seeds evaluated per method</caption>", `<td class="text">FedAvg</td><td>2</td>`},
		"report.md":        {"## Seeds\n\nHow many seeds of each method were evaluated.\n\n**Seeds evaluated per method**\n\n| method | seeds |\n|---|---:|\n| FedAvg | 2 |\n| Local | 2 |\n"},
		"tables/seeds.csv": {"method,seeds\n", "FedAvg,2\n"},
		// The LaTeX.
		"tables/seeds.tex": {"\\caption{Seeds evaluated per method}\n\\label{tab:two-methods-seeds}\n", "FedAvg & 2 \\\\\n", "Local & 2 \\\\\n"},
	} {
		got := read(name)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, got)
			}
		}
	}
	// The tables that predate the list write no LaTeX of their own.
	for _, name := range []string{"runs", "cost", "shift"} {
		if _, err := os.Stat(filepath.Join(out, "tables", name+".tex")); !os.IsNotExist(err) {
			t.Errorf("tables/%s.tex written (%v)", name, err)
		}
	}
}
