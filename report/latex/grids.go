package latex

import (
	"fmt"
	"strings"

	"github.com/fedpipe/fedpipe/results/summary"
)

// Grids renders a report table (one of summary.Tables, as laid out) as booktabs LaTeX
// tables, one per grid: captioned by the grid's title (the table's where the grid has
// none), labelled tab:<name>-<table> (name: the report's, see Label; a second grid's label
// ends in -2, and so on), the words left-aligned, the numbers right-aligned, "—" as "--".
// name stays in a comment above, as in Results.
func Grids(name string, t summary.Built) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%% fedpipe report: %s, %s\n%% requires \\usepackage{booktabs}\n", strings.ReplaceAll(name, "\n", " "), t.Name)
	for i, g := range t.Grids {
		caption := g.Title
		if caption == "" {
			caption = t.Title
		}
		label := Label(name) + "-" + t.Name
		if i > 0 {
			label += fmt.Sprintf("-%d", i+1)
		}
		text := min(g.TextColumns(), len(g.Head))
		fmt.Fprintf(&b, "\n\\begin{table}[t]\n\\centering\n\\caption{%s}\n\\label{%s}\n", escape(caption), label)
		fmt.Fprintf(&b, "\\begin{tabular}{%s%s}\n\\toprule\n", strings.Repeat("l", text), strings.Repeat("r", len(g.Head)-text))
		b.WriteString(row(g.Head) + "\\midrule\n")
		for _, r := range g.Rows {
			b.WriteString(row(r))
		}
		b.WriteString("\\bottomrule\n\\end{tabular}\n\\end{table}\n")
	}
	return b.String()
}

// row is one line of a tabular: the cells escaped, "—" (missing) as "--".
func row(cells []string) string {
	out := make([]string, len(cells))
	for i, c := range cells {
		if c == "—" {
			out[i] = "--"
		} else {
			out[i] = escape(c)
		}
	}
	return strings.Join(out, " & ") + " \\\\\n"
}
