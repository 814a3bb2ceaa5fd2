package latex

import (
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/results/summary"
)

// A report table becomes one booktabs table per grid: the caption falls back to the
// table's title, labels stay distinct, words left and numbers right, a missing cell "--"
// and LaTeX's special characters escaped.
func TestGrids(t *testing.T) {
	b := summary.Built{Table: summary.Table{Name: "shift", Title: "Shift & more"}, Layout: summary.Layout{Grids: []summary.Grid{
		{Head: []string{"method", "d = 0"}, Text: 1, Rows: [][]string{{"FedAvg", "50.00 ± 1.00"}, {"Local_1", "—"}}},
		{Title: "By severity (%)", Head: []string{"method", "corruption", "1"}, Text: 2, Rows: [][]string{{"FedAvg", "fog", "40.00"}}},
	}}}
	tex := Grids("tiny report", b)
	for _, want := range []string{"% fedpipe report: tiny report, shift\n", "\\caption{Shift \\& more}\n\\label{tab:tiny-report-shift}\n",
		"\\begin{tabular}{lr}\n", "FedAvg & 50.00 $\\pm$ 1.00 \\\\\n", "Local\\_1 & -- \\\\\n",
		"\\caption{By severity (\\%)}\n\\label{tab:tiny-report-shift-2}\n", "\\begin{tabular}{llr}\n", "method & corruption & 1 \\\\\n\\midrule\n"} {
		if !strings.Contains(tex, want) {
			t.Errorf("lacks %q:\n%s", want, tex)
		}
	}
	if n := strings.Count(tex, "\\end{table}"); n != 2 {
		t.Errorf("%d tables, want 2", n)
	}
}
