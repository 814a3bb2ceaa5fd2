package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results/export"
	"github.com/fedpipe/fedpipe/stages/data"
)

// No exported path has "=" in it, so DuckDB, polars and pyarrow add no hive-partition
// columns when reading an export with a glob, and every exported table still names its
// run in its identity columns (issue 18): a sweep over two parameters, a label with "/",
// ":" and spaces, and a label sharing its stages with another.
func TestExportPathsHaveNoEqualsAndTablesNameTheirRun(t *testing.T) {
	dir := t.TempDir()
	store, out, rep := filepath.Join(dir, "store"), filepath.Join(dir, "out"), filepath.Join(dir, "rep")
	m := writeManifest(t, dir, tinyManifest+"  - name: \"fed avg/ft: x\"\n    method: fedavg\n")
	sets := []string{"grid.train.lr=[0.05,0.5]", "grid.train.local_epochs=[1,2]", "seeds=[0,1]", "train.rounds=2"}
	var grid []string
	for _, s := range sets {
		grid = append(grid, "-S", s)
	}
	runJSON(t, append([]string{"run", m, "--store", store}, grid...)...)
	if code, _, errs := fedpipe(t, append([]string{"export", m, "--store", store, "-o", out, "--models"}, grid...)...); code != exitOK {
		t.Fatalf("export: %d %s", code, errs)
	}
	if code, _, errs := fedpipe(t, append([]string{"report", m, "--store", store, "-o", rep}, grid...)...); code != exitOK {
		t.Fatalf("report: %d %s", code, errs)
	}
	for _, root := range []string{out, rep} {
		err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
				if strings.Contains(c, "=") {
					t.Errorf("%s: %s has \"=\" in %q (a hive partition to DuckDB); the first such path", root, rel, c)
					return filepath.SkipAll
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	g, _, err := loadGraphSet(m, sets, &data.Loader{}, "")
	if err != nil {
		t.Fatal(err)
	}
	folders := export.StageFolders(g)
	want := map[string]bool{} // every folder the export should have
	for _, n := range g.Nodes {
		views := []*manifest.Run{n.Run}
		names := []string{n.Name}
		if n.Run != nil {
			views = n.RunsOf()
			names = append(names, export.AliasNames(n)...)
		}
		for i, name := range names {
			f := folders[name]
			if want[f] {
				t.Fatalf("two stages in folder %s", f)
			}
			want[f] = true
			checkStageTables(t, filepath.Join(out, f), g, n, views[i])
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !want[e.Name()] {
			t.Errorf("folder %s is no stage's", e.Name())
		}
		delete(want, e.Name())
	}
	if len(want) > 0 {
		t.Errorf("folders not written: %v", want)
	}
	if _, err := os.Stat(filepath.Join(out, "train_fedavg_lr-0.5_local_epochs-2_seed-1", "global.safetensors")); err != nil {
		t.Errorf("the readable layout: %v", err)
	}
}

// checkStageTables reads every Arrow table in dir, the export of stage n seen as run r,
// and checks that its identity columns name that stage and run on every row.
func checkStageTables(t *testing.T, dir string, g *pipeline.Graph, n *pipeline.Node, r *manifest.Run) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.arrow"))
	if err != nil || len(files) == 0 {
		t.Errorf("%s: no tables (%v)", dir, err)
		return
	}
	for _, file := range files {
		tb, err := table.ReadFile(file)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		str := map[string]string{"manifest": g.Manifest.Name, "stage": n.Kind}
		num := map[string]float64{}
		shared := n.Kind == manifest.KindPartition // its own identity, not a run's (issue 46)
		if r != nil {
			str["run"], str["method"] = r.Label(), r.MethodName
			num["seed"] = float64(r.Seed)
			if shared {
				str["run"], num["seed"] = n.Name, float64(r.PartitionSeed())
				delete(str, "method")
				if tb.Col("method") != nil {
					t.Errorf("%s: a partition has a method column", file)
				}
			}
			for _, a := range r.Vary {
				if shared && !pipeline.PartitionSetting(a.Path) {
					if c := strings.ReplaceAll(a.Path, ".", "_"); tb.Col(c) != nil {
						t.Errorf("%s: a partition has the runs' column %s", file, c)
					}
					continue
				}
				v, err := strconv.ParseFloat(a.Value, 64)
				if err != nil {
					t.Fatalf("grid value %q", a.Value)
				}
				num[strings.ReplaceAll(a.Path, ".", "_")] = v
			}
		}
		rows := tb.NumRows()
		for name, v := range str {
			c := tb.Col(name)
			if c == nil || len(c.String) != rows {
				t.Errorf("%s: no string column %s", file, name)
				continue
			}
			for _, got := range c.String {
				if got != v {
					t.Errorf("%s: %s = %q, want %q", file, name, got, v)
					break
				}
			}
		}
		for name, v := range num {
			c := tb.Col(name)
			if c == nil {
				t.Errorf("%s: no column %s", file, name)
				continue
			}
			var vals []float64
			for _, x := range c.Int64 {
				vals = append(vals, float64(x))
			}
			vals = append(vals, c.Float64...)
			if len(vals) != rows {
				t.Errorf("%s: column %s has %d values for %d rows", file, name, len(vals), rows)
			}
			for _, got := range vals {
				if got != v {
					t.Errorf("%s: %s = %v, want %v", file, name, got, v)
					break
				}
			}
		}
	}
}
