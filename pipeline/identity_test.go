package pipeline

import (
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/manifest"
)

// An exported table of a run's stage carries the run's identity on every row, and keeps a
// column it already has.
func TestWithIdentityNamesTheRunOnEveryRow(t *testing.T) {
	g := onlyGraph(t, "id.yaml", "[0]", "[{name: fedavg}, {name: local}]")
	var train *Node
	for _, n := range g.Nodes {
		if n.Kind == manifest.KindTrain && n.Run.MethodName == "local" {
			train = n
		}
	}
	tab := &table.Table{Columns: []table.Column{table.Int64Col("round", []int64{1, 2}), table.StringCol("method", []string{"kept", "kept"})}}
	if !WithIdentity(tab, g, train) {
		t.Fatal("WithIdentity added nothing")
	}
	for col, want := range map[string]string{"manifest": "id.yaml", "stage": manifest.KindTrain, "run": train.Run.Label(),
		"method": "kept", "stage_key": train.Key.String()[:12], "run_key": train.Key.String()[:12]} {
		c := tab.Col(col)
		if c == nil || len(c.String) != 2 || c.String[0] != want || c.String[1] != want {
			t.Errorf("column %s = %+v, want %q on both rows", col, c, want)
		}
	}
	if WithIdentity(tab, g, train) {
		t.Error("a second WithIdentity added columns")
	}
}
