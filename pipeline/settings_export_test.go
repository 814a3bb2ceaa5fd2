package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/manifest"
)

// quickstartGraph builds manifests/quickstart.yaml's graph under the overrides, with the
// synthetic data described, not generated.
func quickstartGraph(t *testing.T, overrides ...string) *Graph {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(here), "..", "manifests", "quickstart.yaml")
	m, err := manifest.LoadManifestOptions(path, manifest.Options{Overrides: overrides, Limits: manifest.DefaultLimits})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Build(m, BuildOptions{Backend: "test", Describe: func(manifest.DatasetSpec) (*manifest.DataDesc, error) {
		return &manifest.DataDesc{Digest: "d", Shape: []int{60}, Classes: 10, Samples: 1000}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// parquetColumns reads a Parquet file with arrow-go's own Parquet reader (pqarrow, not
// fedpipe's codec) and returns each column's Arrow type and its first row as text ("NULL"
// for a null).
func parquetColumns(t *testing.T, b []byte) (map[string]arrow.DataType, map[string]string) {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	types, first := map[string]arrow.DataType{}, map[string]string{}
	for i := 0; i < int(tbl.NumCols()); i++ {
		c := tbl.Column(i)
		types[c.Name()] = c.DataType()
		a := c.Data().Chunk(0)
		if a.IsNull(0) {
			first[c.Name()] = "NULL"
		} else {
			first[c.Name()] = a.(interface{ ValueStr(int) string }).ValueStr(0)
		}
	}
	return types, first
}

// The quick start's exports at its defaults and under three overrides, read through a real
// Parquet reader: every pair differs in a named settings column both in the report's runs
// table and in a train stage's table; integer fields are integer columns; partition_alpha
// is null under the natural partition, which has none, and set under dirichlet.
func TestExportsOfOverriddenRunsDifferInNamedSettings(t *testing.T) {
	variants := [][]string{nil, {"train.rounds=30"}, {"model.hidden=[64]"}, {"partition.scheme=dirichlet"}}
	type export struct {
		types map[string]arrow.DataType
		first map[string]string
	}
	read := func(t *testing.T, tab *table.Table) export {
		b, err := table.EncodeParquet(tab)
		if err != nil {
			t.Fatal(err)
		}
		ty, f := parquetColumns(t, b)
		return export{ty, f}
	}
	var runs, trains []export
	for _, ov := range variants {
		g := quickstartGraph(t, ov...)
		var train *Node
		for _, n := range g.Nodes {
			if n.Kind == manifest.KindTrain && n.Run.MethodName == "fedavg" {
				train = n
			}
		}
		metrics := &table.Table{Columns: []table.Column{table.Int64Col("round", []int64{5, 10})}}
		WithIdentity(metrics, g, train)
		trains = append(trains, read(t, metrics))
		rt := &table.Table{Columns: []table.Column{table.StringCol("run", []string{train.Run.Label(), "no such run"})}}
		WithIdentity(rt, g, &Node{Kind: manifest.KindReport})
		runs = append(runs, read(t, rt))
	}
	keys := map[string]bool{"stage_key": true, "run_key": true, "run": true, "manifest": true, "stage": true}
	for name, ex := range map[string][]export{"report/runs": runs, "train metrics": trains} {
		for i := range ex {
			for j := i + 1; j < len(ex); j++ {
				var differ []string
				for c, v := range ex[i].first {
					if !keys[c] && ex[j].first[c] != v {
						differ = append(differ, c)
					}
				}
				if len(differ) == 0 {
					t.Errorf("%s: %v and %v differ in no settings column", name, variants[i], variants[j])
				}
			}
		}
		for _, c := range []string{"train_rounds", "train_batch_size", "train_local_epochs", "partition_clients", "dataset_devices", "train_eval_every", "partition_seed", "dataset_max_samples"} {
			if ty := ex[0].types[c]; ty == nil || ty.ID() != arrow.INT64 {
				t.Errorf("%s: column %s is %v, want int64", name, c, ty)
			}
		}
		for c, want := range map[string]string{"train_rounds": "20", "model_hidden": "[32]", "partition_alpha": "NULL",
			"dataset_alpha": "0.5", "partition_test_fraction": "0.25", "train_eval_train_split": "false", "method_algorithm": "fedavg"} {
			if got := ex[0].first[c]; got != want {
				t.Errorf("%s at defaults: %s = %s, want %s", name, c, got, want)
			}
		}
		if got := ex[3].first["partition_alpha"]; got != "0.5" {
			t.Errorf("%s under dirichlet: partition_alpha = %s, want 0.5", name, got)
		}
		if got := ex[1].first["train_rounds"]; got != "30" {
			t.Errorf("%s with train.rounds=30: train_rounds = %s", name, got)
		}
	}
	// A runs-table row of no run has null settings.
	g := quickstartGraph(t)
	rt := &table.Table{Columns: []table.Column{table.StringCol("run", []string{metrics0(t, g).Col("run").String[0], "no such run"})}}
	WithIdentity(rt, g, &Node{Kind: manifest.KindReport})
	if c := rt.Col("train_rounds"); c == nil || c.Null(0) || !c.Null(1) {
		t.Errorf("a row of no run: train_rounds = %+v, want null", c)
	}
}

// metrics0 is a train metrics table of the fedavg run of g with its identity.
func metrics0(t *testing.T, g *Graph) *table.Table {
	for _, n := range g.Nodes {
		if n.Kind == manifest.KindTrain && n.Run.MethodName == "fedavg" {
			tab := &table.Table{Columns: []table.Column{table.Int64Col("round", []int64{5})}}
			WithIdentity(tab, g, n)
			return tab
		}
	}
	t.Fatal("no fedavg run")
	return nil
}

// docs/outputs.md lists the quick start's identity and settings columns as the exports have
// them, those null there starred.
func TestOutputsDocListsTheQuickstartSettings(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "docs", "outputs.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "The quick start's train and evaluate tables end with these columns")
	if i < 0 {
		t.Fatal("docs/outputs.md lacks the quick start's columns")
	}
	block := doc[i:]
	block = block[strings.Index(block, "```\n")+4:]
	block = block[:strings.Index(block, "```")]
	var listed []string
	for _, w := range strings.Fields(block) {
		if strings.HasPrefix(w, "(") {
			break // the closing note
		}
		listed = append(listed, w)
	}
	var want []string
	for _, c := range metrics0(t, quickstartGraph(t)).Columns[1:] { // after the table's own "round"
		name := c.Name
		if c.Null(0) {
			name += "*"
		}
		want = append(want, name)
	}
	if strings.Join(listed, " ") != strings.Join(want, " ") {
		t.Errorf("docs/outputs.md lists\n%v\nthe exports have\n%v", listed, want)
	}
}
