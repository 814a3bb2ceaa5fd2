// Package page is fedpipe serve's live page: every run of the manifests with its state
// and the worker that holds it, and one chart per figure the progress journals carry with
// every method overlaid (its seeds as a band, an extended run's earlier rounds carried).
// The page is self-contained: its style, script and charts are inline.
package page

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/screens/watch"
)

// Page serves the page: / (the whole page), /body (its changing part, which the page
// fetches every refresh) and /runs.json (every run's state and journal). Anything but GET
// and HEAD is refused: the page changes nothing.
type Page struct {
	w       *watch.Watch
	refresh time.Duration
	expect  map[string][]manifest.Expectation

	mu     sync.Mutex
	runs   []watch.Run
	readAt time.Time
	err    error
}

// New is the page of a watch, whose runs it reads again at most every half refresh.
func New(w *watch.Watch, refresh time.Duration) *Page {
	p := &Page{w: w, refresh: refresh, expect: map[string][]manifest.Expectation{}}
	for _, g := range w.Graphs {
		p.expect[g.Manifest.File] = g.Manifest.Expect
	}
	return p
}

// current returns the runs, read again at most every half refresh however many pages ask.
func (p *Page) current(ctx context.Context) ([]watch.Run, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.readAt.IsZero() || time.Since(p.readAt) >= p.refresh/2 {
		p.runs, p.err = p.w.Runs(ctx)
		p.readAt = time.Now()
	}
	return p.runs, p.err
}

func (p *Page) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rw.Header().Set("Allow", "GET, HEAD")
		http.Error(rw, "read-only: GET and HEAD only", http.StatusMethodNotAllowed)
		return
	}
	rw.Header().Set("Cache-Control", "no-store")
	rw.Header().Set("X-Content-Type-Options", "nosniff")
	runs, err := p.current(r.Context())
	if err != nil {
		http.Error(rw, err.Error(), http.StatusServiceUnavailable)
		return
	}
	switch r.URL.Path {
	case "/runs.json":
		rw.Header().Set("Content-Type", "application/json")
		writeJSON(rw, map[string]any{"time": time.Now().UTC().Format(time.RFC3339), "store": p.w.Dir, "runs": runs})
	case "/body":
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(rw, p.Body(runs))
	case "/":
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(rw, p.HTML(runs))
	default:
		http.NotFound(rw, r)
	}
}

// pageStyle and pageScript are the page's only style and script, served inline: the page
// loads nothing else.
const pageStyle = `body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin-bottom:1.5em}td,th{padding:.2em .7em;text-align:left;border-bottom:1px solid #ddd}
.state{font-weight:600}.training{color:#1f6fb2}.finished{color:#2a7d2a}.failed,.stalled{color:#b3261e}.waiting,.interrupted{color:#777}
.charts{display:flex;flex-wrap:wrap;gap:1em}.chart{background:#fff}.note{color:#666}
.swatch{display:inline-block;width:1.6em;height:.7em;margin-right:.4em;vertical-align:middle}`

const pageScript = `setInterval(function(){fetch('body',{cache:'no-store'}).then(function(r){return r.ok?r.text():null}).then(function(t){if(t!==null){document.getElementById('main').innerHTML=t}}).catch(function(){})},%d);`

// HTML is the whole page: the body and the script that refreshes it.
func (p *Page) HTML(runs []watch.Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fedpipe: live runs</title>\n<style>%s</style>\n", pageStyle)
	fmt.Fprintf(&b, "<noscript><meta http-equiv=\"refresh\" content=\"%d\"></noscript></head>\n<body>\n<h1>fedpipe: live runs</h1>\n", max(1, int(p.refresh.Seconds())))
	fmt.Fprintf(&b, "<div id=\"main\">%s</div>\n<script>%s</script>\n</body></html>\n", p.Body(runs), fmt.Sprintf(pageScript, p.refresh.Milliseconds()))
	return b.String()
}

// Body is the page's changing part: the time, a table of the runs with who holds each,
// the curves' legend and the overlaid charts.
func (p *Page) Body(runs []watch.Run) string {
	var b strings.Builder
	where := "store " + p.w.Dir
	if p.w.Remote != nil {
		where += ", remote " + p.w.Remote.String()
	}
	fmt.Fprintf(&b, "<p class=\"note\">%s, %s. %s</p>\n", time.Now().Format("15:04:05"), html.EscapeString(where), html.EscapeString(watch.Summary(runs)))
	b.WriteString("<table><tr><th>state</th><th>run</th><th>progress</th><th>held by</th><th>latest</th></tr>\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "<tr data-key=\"%s\" data-state=\"%s\"><td class=\"state %s\">%s</td><td>%s</td><td>%s</td><td class=\"holder\">%s</td><td>%s</td></tr>\n",
			r.Key, r.State, r.State, r.State, html.EscapeString(r.Label), html.EscapeString(r.Detail), html.EscapeString(watch.HolderText(r)), html.EscapeString(watch.Latest(r.Journal)))
	}
	b.WriteString("</table>\n")
	curves := Curves(runs)
	charts := Charts(curves, p.expect)
	b.WriteString(Legend(curves, charts))
	if len(charts) == 0 {
		b.WriteString("<p class=\"note\">no rounds published yet</p>\n")
		return b.String()
	}
	b.WriteString("<div class=\"charts\">")
	for _, ch := range charts {
		b.WriteString(SVG(ch))
	}
	b.WriteString("</div>\n")
	return b.String()
}

// Legend is a table of the curves (colour, name, seeds, points, rounds carried from the
// runs they extend) with what the lines and bands mean, and, per chart, the rounds that
// fewer seeds than the curve's have.
func Legend(curves []*Curve, charts []Chart) string {
	var b strings.Builder
	b.WriteString("<table class=\"legend\"><tr><th>method</th><th>seeds</th><th>points</th><th>carried</th></tr>\n")
	for _, c := range curves {
		carried := 0
		for _, r := range c.Runs {
			carried = max(carried, len(r.Carried))
		}
		note := ""
		if c.Finished(true) && c.Points() == 0 {
			note = " (computed before its train stage published progress; see fedpipe report)"
		}
		carriedText := "—"
		if carried > 0 {
			carriedText = manifest.ContinuesPhrase(carried)
		}
		fmt.Fprintf(&b, "<tr class=\"cell\" data-points=\"%d\" data-finished=\"%v\"><td><span class=\"swatch\" style=\"background:%s\"></span>%s%s</td><td>%d</td><td>%d</td><td>%s</td></tr>\n",
			c.Points(), c.Finished(false), c.Color, html.EscapeString(c.Name), html.EscapeString(note), c.Seeds, c.Points(), carriedText)
	}
	b.WriteString("</table>\n<p class=\"note\">Each line is the mean over a method's seeds; its band spans their minimum to maximum; a hollow point has fewer seeds than the method (hover a point for its seeds).")
	for _, ch := range charts {
		if len(ch.Refs) > 0 { // the dashed lines drawn: the manifest's expectations
			b.WriteString(" Dashed: published numbers.")
			break
		}
	}
	b.WriteString("</p>\n")
	for _, ch := range charts {
		for _, l := range ch.Lines {
			if few := FewerSeeds(l); few != "" {
				fmt.Fprintf(&b, "<p class=\"note fewer\">%s, %s: %s</p>\n", html.EscapeString(ch.Metric.Title), html.EscapeString(l.Curve.Name), html.EscapeString(few))
			}
		}
	}
	return b.String()
}

// writeJSON writes v as indented JSON, as fedpipe's --json outputs are.
func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
