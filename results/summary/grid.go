package summary

import (
	"fmt"
	"strings"
)

// Grid is a table ready to be rendered: a title, a header, and rows of cells, the first
// Text of them words (left-aligned), the rest numbers.
type Grid struct {
	// Title heads the grid (a level-3 heading in report.md, the caption on the page and in
	// the LaTeX); empty: none, as for the runs table, which report.md's own heading
	// introduces.
	Title string
	Head  []string
	// PageHead, when not nil, heads the grid on the page instead of Head: shorter names,
	// where the page's section intro says what Head spells out in each column (the runs
	// table's).
	PageHead []string
	// Text counts the leading columns of words; 0 counts as 1 in markdown and LaTeX, while
	// the page then marks no header cell as words (the runs table's first column reads as
	// text all the same).
	Text int
	Rows [][]string
}

// TextColumns is Text as markdown and LaTeX align it: at least 1.
func (g Grid) TextColumns() int { return max(g.Text, 1) }

// Markdown renders the grid under a level-3 heading (none without a title), as report.md
// lays it out.
func (g Grid) Markdown() string {
	var b strings.Builder
	if g.Title != "" {
		fmt.Fprintf(&b, "\n### %s\n\n", g.Title)
	}
	fmt.Fprintf(&b, "| %s |\n|", strings.Join(g.Head, " | "))
	b.WriteString(strings.Repeat("---|", g.TextColumns()) + strings.Repeat("---:|", len(g.Head)-g.TextColumns()) + "\n")
	for _, r := range g.Rows {
		fmt.Fprintf(&b, "| %s |\n", strings.Join(r, " | "))
	}
	return b.String()
}
