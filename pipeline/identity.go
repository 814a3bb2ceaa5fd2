package pipeline

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/manifest"
)

// WithIdentity appends to a stage's exported table the identity of the run it belongs to,
// repeated on every row — manifest, stage, stage_key, run (its label), method, seed, run_key
// (the run's train stage's key) and every effective setting of the run as
// manifest.Settings derives them from the schema, typed as in the manifest and null where
// a field does not apply to the run (see SettingsColumns) — so that tables read together (a
// DuckDB glob, pandas concat) keep which run each row came from, and two runs that differ by
// any override differ in a named column. Columns the table already has are left alone. It
// reports whether it added any.
//
// A partition is shared by every run of its seed and data settings, so it carries its own
// identity, not one run's: run is the stage's name ("partition alpha=0.1 seed=0"), seed the
// partition's seed, the settings only its dataset.* and partition.* ones, and no method
// or run_key.
func WithIdentity(t *table.Table, g *Graph, n *Node) bool {
	rows := t.NumRows()
	added := false
	add := func(c table.Column) { // a column the table does not have yet
		if t.Col(c.Name) == nil {
			t.Columns = append(t.Columns, c)
			added = true
		}
	}
	addString := func(name, v string) { add(table.StringCol(name, repeat(v, rows))) }
	addString("manifest", g.Manifest.Name)
	addString("stage", n.Kind)
	addString("stage_key", n.Key.String()[:12])
	if n.Run == nil {
		return withRunsGrid(t, g) || added
	}
	r := n.Run
	shared := n.Kind == manifest.KindPartition
	seed := r.Seed
	if shared {
		addString("run", n.Name)
		seed = r.PartitionSeed()
	} else {
		addString("run", r.Label())
		addString("method", r.MethodName)
	}
	add(table.Int64Col("seed", repeat(seed, rows)))
	if !shared {
		if k := runKey(g, r); k != "" {
			addString("run_key", k)
		}
	}
	var settings []manifest.Setting
	for _, s := range manifest.Settings(r, g.Manifest.Shift) {
		if !shared || PartitionSetting(s.Path) {
			settings = append(settings, s)
		}
	}
	rowSettings := repeat(settings, rows)
	for _, c := range SettingsColumns(rowSettings) {
		add(c)
	}
	// A swept path no setting covers (none at present) still names its value.
	for _, a := range r.Vary {
		if shared && !PartitionSetting(a.Path) {
			continue // a setting of the runs, not of their shared partition
		}
		name := strings.ReplaceAll(a.Path, ".", "_")
		if f, err := strconv.ParseFloat(a.Value, 64); err == nil {
			add(table.Float64Col(name, repeat(f, rows)))
			continue
		}
		addString(name, a.Value)
	}
	return added
}

// SettingsColumns is one column per setting path in rows (row i's settings, nil for a row
// of no run), in the order the paths first appear, named Setting.Column and typed as the
// setting's value (int64, float64, string, bool). A row that lacks the setting, or whose
// setting does not apply (Setting.Applies false), is null there.
func SettingsColumns(rows [][]manifest.Setting) []table.Column {
	var paths []string
	first := map[string]manifest.Setting{}
	for _, ss := range rows {
		for _, s := range ss {
			if _, ok := first[s.Path]; !ok {
				first[s.Path] = s
				paths = append(paths, s.Path)
			}
		}
	}
	n := len(rows)
	cols := make([]table.Column, 0, len(paths))
	for _, p := range paths {
		s0 := first[p]
		c := table.Column{Name: s0.Column(), Valid: make([]bool, n)}
		switch s0.Value.(type) {
		case int64:
			c.Kind, c.Int64 = table.KindInt64, make([]int64, n)
		case float64:
			c.Kind, c.Float64 = table.KindFloat64, make([]float64, n)
		case bool:
			c.Kind, c.Bool = table.KindBool, make([]bool, n)
		default:
			c.Kind, c.String = table.KindString, make([]string, n)
		}
		nulls := false
		for i, ss := range rows {
			for _, s := range ss {
				if s.Path != p || !s.Applies {
					continue
				}
				c.Valid[i] = true
				switch v := s.Value.(type) {
				case int64:
					c.Int64[i] = v
				case float64:
					c.Float64[i] = v
				case bool:
					c.Bool[i] = v
				default:
					c.String[i] = fmt.Sprint(v)
				}
			}
			nulls = nulls || !c.Valid[i]
		}
		if !nulls {
			c.Valid = nil
		}
		cols = append(cols, c)
	}
	return cols
}

// repeat is n copies of v.
func repeat[T any](v T, n int) []T {
	vs := make([]T, n)
	for i := range vs {
		vs[i] = v
	}
	return vs
}

// withRunsGrid adds to a table with a row per run (the report's runs table: its "run"
// column holds run labels) its method's display name (display), its key (run_key) and its
// effective settings (SettingsColumns: null in a row of no run), row by row, then any swept
// path no setting covers. It reports whether it added any.
func withRunsGrid(t *table.Table, g *Graph) bool {
	label := t.Col("run")
	if label == nil || t.Col("display") != nil {
		return false
	}
	runs := map[string]*manifest.Run{}
	var paths []string
	seen := map[string]bool{}
	for _, n := range g.Nodes {
		if n.Kind != manifest.KindTrain || n.Run == nil {
			continue
		}
		runs[n.Run.Label()] = n.Run
		for _, a := range n.Run.Vary {
			if !seen[a.Path] {
				seen[a.Path] = true
				paths = append(paths, a.Path)
			}
		}
	}
	rows := t.NumRows()
	display, keys := make([]string, rows), make([]string, rows)
	settings := make([][]manifest.Setting, rows)
	for i, l := range label.String {
		if r := runs[l]; r != nil {
			display[i] = manifest.DisplayName(r.Method) + strings.TrimPrefix(r.Config(), r.Method)
			keys[i] = runKey(g, r)
			settings[i] = manifest.Settings(r, g.Manifest.Shift)
		}
	}
	t.Columns = append(t.Columns, table.StringCol("display", display), table.StringCol("run_key", keys))
	for _, c := range SettingsColumns(settings) {
		if t.Col(c.Name) == nil {
			t.Columns = append(t.Columns, c)
		}
	}
	for _, path := range paths {
		name := strings.ReplaceAll(path, ".", "_")
		if t.Col(name) != nil {
			continue
		}
		vals := make([]string, rows)
		numeric := true
		for i, l := range label.String {
			if r := runs[l]; r != nil {
				for _, a := range r.Vary {
					if a.Path == path {
						vals[i] = a.Value
					}
				}
			}
			if _, err := strconv.ParseFloat(vals[i], 64); err != nil {
				numeric = false
			}
		}
		if !numeric {
			t.Columns = append(t.Columns, table.StringCol(name, vals))
			continue
		}
		fs := make([]float64, rows)
		for i, v := range vals {
			fs[i], _ = strconv.ParseFloat(v, 64)
		}
		t.Columns = append(t.Columns, table.Float64Col(name, fs))
	}
	return true
}

// runKey is the short key of run r's train stage in g ("" when g has none): the run's key,
// the same on every table of the run.
func runKey(g *Graph, r *manifest.Run) string {
	for _, n := range g.Nodes {
		if n.Kind == manifest.KindTrain && n.Run == r {
			return n.Key.String()[:12]
		}
	}
	return ""
}
