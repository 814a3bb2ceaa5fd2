package summary

import (
	"strings"
	"testing"
)

func TestCostMarkdownBesideFedAvg(t *testing.T) {
	md := CostMarkdown([]CostEntry{
		{Config: "dmpfl", Method: "dmpfl", MBUp: 1, MBDown: 2, FLOPs: 3e9},
		{Config: "fedavg", Method: "fedavg", MBUp: 4, MBDown: 4, FLOPs: 6e9, Reference: true},
		{Config: "fedavg", Method: "fedavg", MBUp: 4, MBDown: 4, FLOPs: 6e9, Reference: true},
	})
	for _, want := range []string{"| dmpfl | 1.000 (0.25×) | 2.000 (0.50×) | 3e+09 (0.50×) |", "| fedavg | 4.000 (1.00×) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("missing %q in\n%s", want, md)
		}
	}
}
