package site

import (
	"fmt"
	"html"
	"strings"

	"github.com/fedpipe/fedpipe/report/chart"
)

// css is the page's style sheet, inlined in its head.
const css = `
body { font-family: Helvetica, Arial, sans-serif; color: #1a1a1a; background: #f6f7f9; margin: 0; line-height: 1.45; }
main { max-width: 1180px; margin: 0 auto; padding: 28px 36px 60px; background: #ffffff; min-height: 100vh; box-shadow: 0 0 12px rgba(0,0,0,0.06); }
h1 { font-size: 28px; margin: 0 0 6px; }
h2 { font-size: 21px; margin: 34px 0 8px; padding-bottom: 4px; border-bottom: 2px solid #0072B2; }
h3 { font-size: 16px; margin: 24px 0 6px; }
p.meta { color: #555555; margin: 4px 0 14px; }
p.intro { color: #333333; margin: 6px 0 12px; font-size: 14px; }
table { border-collapse: collapse; margin: 8px 0 18px; font-size: 13.5px; }
caption { text-align: left; font-weight: bold; padding: 4px 0; white-space: nowrap; }
th, td { border: 1px solid #d0d4da; padding: 5px 10px; text-align: right; vertical-align: top; }
th { background: #eef2f6; font-weight: 600; }
td:first-child, th:first-child, td.text, th.text { text-align: left; }
tbody tr:nth-child(even) td { background: #fafbfc; }
td.pass { background: #e3f0fa !important; color: #004b78; }
td.fail { background: #fbe6da !important; color: #8a3000; font-weight: 600; }
td.missing { color: #8a8a8a; font-style: italic; }
.summary { display: inline-block; margin: 4px 0 10px; padding: 6px 12px; border-radius: 4px; background: #eef2f6; font-size: 14px; }
div.figures { display: flex; flex-wrap: wrap; gap: 8px 28px; align-items: flex-start; }
figure { margin: 10px 0 22px; flex: 0 1 calc(50% - 14px); min-width: 480px; }
figure.wide { flex-basis: 100%; }
figure svg { max-width: 100%; height: auto; border: 1px solid #e1e4e8; }
figcaption { font-size: 13px; color: #444444; margin-top: 4px; }
figcaption a.file { color: #0072B2; margin-left: 6px; font-size: 12px; }
nav { font-size: 13px; margin: 8px 0 0; }
nav a { color: #0072B2; margin-right: 14px; text-decoration: none; }
code { font-size: 13px; background: #f0f2f4; padding: 1px 4px; border-radius: 3px; }
`

// inlineCode turns `x` spans of a plain-text paragraph into <code> elements.
func inlineCode(s string) string {
	parts := strings.Split(html.EscapeString(s), "`")
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString("<code>" + p + "</code>")
		} else {
			if i%2 == 1 {
				b.WriteString("`")
			}
			b.WriteString(p)
		}
	}
	return b.String()
}

func (s *Site) html(sections []section) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s — fedpipe report</title>\n<style>%s</style>\n</head>\n<body>\n<main>\n",
		html.EscapeString(s.Title), css)
	fmt.Fprintf(&b, "<h1>%s</h1>\n", html.EscapeString(s.Title))
	if d := s.description(); d != "" {
		fmt.Fprintf(&b, "<p class=\"meta\">%s</p>\n", html.EscapeString(d))
	}
	fmt.Fprintf(&b, "<div class=\"summary\">Manifest <code>%s</code> · %d of %d runs computed · %d figures</div>\n", html.EscapeString(s.files()), s.Computed, s.Runs, len(s.Figures))
	// The results (and their verification) first, then the figures, then the details;
	// provenance last and folded.
	b.WriteString("<nav>")
	figuresLinked := len(s.Figures) == 0
	for i, sec := range sections {
		if sec.details && !figuresLinked {
			b.WriteString(`<a href="#figures">Figures</a>`)
			figuresLinked = true
		}
		fmt.Fprintf(&b, `<a href="#s%d">%s</a>`, i, html.EscapeString(sec.title))
	}
	if !figuresLinked {
		b.WriteString(`<a href="#figures">Figures</a>`)
	}
	b.WriteString("</nav>\n")
	figuresDone := false
	for i, sec := range sections {
		if sec.details && !figuresDone {
			s.figuresHTML(&b)
			figuresDone = true
		}
		if sec.collapsed {
			fmt.Fprintf(&b, "<details id=\"s%d\">\n<summary><h2 style=\"display:inline\">%s</h2></summary>\n<p class=\"intro\">%s</p>\n", i, html.EscapeString(sec.title), inlineCode(sec.intro))
		} else {
			fmt.Fprintf(&b, "<h2 id=\"s%d\">%s</h2>\n<p class=\"intro\">%s</p>\n", i, html.EscapeString(sec.title), inlineCode(sec.intro))
		}
		for _, g := range sec.grids {
			g.html(&b)
		}
		if sec.collapsed {
			b.WriteString("</details>\n")
		}
	}
	if !figuresDone {
		s.figuresHTML(&b)
	}
	b.WriteString("</main>\n</body>\n</html>\n")
	return b.String()
}

// figuresHTML writes the page's figures section (nothing when there are none).
func (s *Site) figuresHTML(b *strings.Builder) {
	if len(s.Figures) == 0 {
		return
	}
	b.WriteString("<h2 id=\"figures\">Figures</h2>\n")
	for _, n := range s.Notes {
		fmt.Fprintf(b, "<p class=\"intro\">%s</p>\n", html.EscapeString(n))
	}
	b.WriteString("<div class=\"figures\">\n")
	for _, f := range s.Figures {
		class := ""
		if _, panels := f.Chart.(chart.Panels); panels || strings.HasPrefix(f.Name, "mask-iou") {
			class = ` class="wide"`
		}
		name := html.EscapeString(f.Name)
		fmt.Fprintf(b, "<figure id=\"fig-%s\"%s>\n<h3>%s</h3>\n%s<figcaption>%s Data: <code>tables/%s.csv</code>.%s</figcaption>\n</figure>\n",
			name, class, html.EscapeString(f.Title), inlineSVG(f.SVG), html.EscapeString(f.Caption), name, s.fileLinks(f.Name, false))
	}
	b.WriteString("</div>\n")
}
