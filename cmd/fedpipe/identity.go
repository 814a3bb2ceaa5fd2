package main

import (
	"strconv"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/pipeline"
)

// withIdentity appends to a stage's exported table the identity of the run it belongs to,
// repeated on every row — manifest, stage, run (its label), method, seed and each swept
// parameter (grid path with "." as "_", e.g. train_lr) — so that tables read together (a
// DuckDB glob, pandas concat) keep which run each row came from without parsing folder
// names. Columns the table already has are left alone. It reports whether it added any.
func withIdentity(t *table.Table, g *pipeline.Graph, n *pipeline.Node) bool {
	rows := t.NumRows()
	added := false
	addString := func(name, v string) {
		if t.Col(name) != nil {
			return
		}
		vs := make([]string, rows)
		for i := range vs {
			vs[i] = v
		}
		t.Columns = append(t.Columns, table.StringCol(name, vs))
		added = true
	}
	addString("manifest", g.Manifest.Name)
	addString("stage", n.Kind)
	if n.Run == nil {
		return added
	}
	r := n.Run
	addString("run", r.Label())
	addString("method", r.MethodName)
	if t.Col("seed") == nil {
		vs := make([]int64, rows)
		for i := range vs {
			vs[i] = r.Seed
		}
		t.Columns = append(t.Columns, table.Int64Col("seed", vs))
		added = true
	}
	for _, a := range r.Vary {
		name := strings.ReplaceAll(a.Path, ".", "_")
		if f, err := strconv.ParseFloat(a.Value, 64); err == nil && t.Col(name) == nil {
			vs := make([]float64, rows)
			for i := range vs {
				vs[i] = f
			}
			t.Columns = append(t.Columns, table.Float64Col(name, vs))
			added = true
			continue
		}
		addString(name, a.Value)
	}
	return added
}
