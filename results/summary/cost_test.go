package summary

import (
	"strings"
	"testing"
)

func TestCostMarkdownBesideFedAvg(t *testing.T) {
	cost := func(config string, c Cost) Entry { return Entry{Config: config, Method: config, Cost: &c} }
	g, ok := CostGrid([]Entry{
		cost("dmpfl", Cost{MBUp: 1, MBDown: 2, FLOPs: 3e9}),
		{Config: "local", Method: "local"}, // no cost recorded: no row
		cost("fedavg", Cost{MBUp: 4, MBDown: 4, FLOPs: 6e9, Reference: true}),
		cost("fedavg", Cost{MBUp: 4, MBDown: 4, FLOPs: 6e9, Reference: true}),
	})
	md := g.Markdown()
	if !ok || len(g.Rows) != 2 {
		t.Errorf("grid of %d rows (%v), want dmpfl and fedavg", len(g.Rows), ok)
	}
	for _, want := range []string{"| dmpfl | 1.000 (0.25×) | 2.000 (0.50×) | 3e+09 (0.50×) |", "| fedavg | 4.000 (1.00×) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in\n%s", want, md)
		}
	}
}

// Entries without a cost give no grid.
func TestCostGridWithoutCosts(t *testing.T) {
	if _, ok := CostGrid([]Entry{{Config: "fedavg", Evaluated: true}}); ok {
		t.Error("a cost grid without costs")
	}
}
