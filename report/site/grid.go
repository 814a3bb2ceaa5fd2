package site

import (
	"fmt"
	"html"
	"strings"
)

// cell is one table cell: its text and a style class (pass, fail, missing or ""); bold sets
// the text's first word (a results cell's mean: its column's best) in bold.
type cell struct {
	text, class string
	bold        bool
}

// boldSplit splits a bold cell's text into its first word and the rest.
func (c cell) boldSplit() (first, rest string) {
	i := strings.IndexByte(c.text, ' ')
	if i < 0 {
		return c.text, ""
	}
	return c.text[:i], c.text[i:]
}

// grid is a table rendered both as markdown and HTML.
type grid struct {
	caption string
	head    []string
	// text is the number of leading columns of words (left-aligned in markdown; 0 means 1).
	text int
	rows [][]cell
}

// cells wraps plain texts as table cells; "—" marks a missing value.
func cells(texts []string) []cell {
	out := make([]cell, len(texts))
	for i, t := range texts {
		out[i] = cell{text: t}
		if t == "—" {
			out[i].class = "missing"
		}
	}
	return out
}

// mdEsc keeps a cell from breaking a markdown table.
func mdEsc(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func (g grid) markdown(b *strings.Builder) {
	if g.caption != "" {
		fmt.Fprintf(b, "**%s**\n\n", g.caption)
	}
	b.WriteString("|")
	for _, h := range g.head {
		b.WriteString(" " + mdEsc(h) + " |")
	}
	text := max(g.text, 1)
	b.WriteString("\n|" + strings.Repeat("---|", text) + strings.Repeat("---:|", len(g.head)-text) + "\n")
	for _, r := range g.rows {
		b.WriteString("|")
		for _, c := range r {
			if c.bold {
				first, rest := c.boldSplit()
				b.WriteString(" **" + mdEsc(first) + "**" + mdEsc(rest) + " |")
				continue
			}
			b.WriteString(" " + mdEsc(c.text) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func (g grid) html(b *strings.Builder) {
	b.WriteString("<table>\n")
	if g.caption != "" {
		fmt.Fprintf(b, "<caption>%s</caption>\n", html.EscapeString(g.caption))
	}
	b.WriteString("<thead><tr>")
	for i, h := range g.head {
		if i < g.text {
			fmt.Fprintf(b, `<th class="text">%s</th>`, html.EscapeString(h))
		} else {
			fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(h))
		}
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range g.rows {
		b.WriteString("<tr>")
		for _, c := range r {
			class := c.class
			if !numeric(c.text) {
				class = strings.TrimSpace(class + " text")
			}
			text := html.EscapeString(c.text)
			if c.bold {
				first, rest := c.boldSplit()
				text = "<strong>" + html.EscapeString(first) + "</strong>" + html.EscapeString(rest)
			}
			if class != "" {
				fmt.Fprintf(b, `<td class="%s">%s</td>`, class, text)
			} else {
				fmt.Fprintf(b, "<td>%s</td>", text)
			}
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
}

// numeric reports whether a cell reads as a number (right-aligned) rather than text.
func numeric(s string) bool {
	if s == "" || s == "—" {
		return true
	}
	c := s[0]
	return c >= '0' && c <= '9' || c == '+' || c == '-' || c == '>'
}
