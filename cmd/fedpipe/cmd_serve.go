package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fedpipe/fedpipe/live"
	"github.com/fedpipe/fedpipe/manifest"
)

// defaultServeAddr is where serve listens unless --addr says otherwise: the loopback only,
// so the page is reached from elsewhere through an SSH tunnel (docs/commands.md).
const defaultServeAddr = "127.0.0.1:8150"

// serveCmd is `fedpipe serve MANIFEST... [--remote URL]`: a read-only web page of every run
// of the manifests with its curves growing while it trains (see livePage).
func serveCmd(c *call) error {
	args, stdout, stderr := c.args, c.stdout, c.stderr
	fs := c.flags()
	var f commonFlags
	f.register(fs, c.groups)
	addr := fs.String("addr", defaultServeAddr, "address to listen on (host:port; port 0 picks a free one). Keep it on 127.0.0.1 and reach it through an SSH tunnel")
	refresh := fs.Duration("refresh", 2*time.Second, "how often the page fetches the runs' progress")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: fedpipe serve MANIFEST... [--remote URL] [flags]\n\n"+
			"Serves a read-only web page of every run of the manifests, its curves growing while it trains\n"+
			"(training loss per round, test accuracy before and after fine-tuning, seeds as a mean ± std band,\n"+
			"published numbers as reference lines) and its state: waiting, training round r of T with its ETA,\n"+
			"finished, failed or stalled. It reads the progress journals train stages publish in the store (and\n"+
			"on --remote, for workers) and never waits for or slows a run. Everything the page needs is served\n"+
			"by fedpipe itself. From a laptop:  ssh -L 8150:127.0.0.1:8150 HOST  then open http://127.0.0.1:8150/\n\nFlags:\n%s", fs.FlagUsages())
	}
	ctx, w, stop, err := startWatch("serve", fs, args, &f, "refresh", refresh, 200*time.Millisecond, stdout, stderr)
	if err != nil {
		return err
	}
	defer stop()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return failf(exitInvalid, "fedpipe serve: --addr %s: %v", *addr, err)
	}
	page := newLivePage(w, *refresh)
	srv := &http.Server{Handler: page, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "fedpipe serve: http://%s/  (read-only; Ctrl-C stops it)\n", ln.Addr())
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); host == "127.0.0.1" || host == "::1" {
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		fmt.Fprintf(stdout, "from another machine: ssh -L %s:127.0.0.1:%s USER@THIS-HOST, then open http://127.0.0.1:%s/\n", port, port, port)
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return failf(exitFailure, "fedpipe serve: %v", err)
	}
	return nil
}

// livePage serves the page: / (the whole page), /body (its changing part, which the page
// fetches every refresh) and /runs.json (every run's state and journal). Anything but GET
// and HEAD is refused: the page changes nothing.
type livePage struct {
	w       *liveWatch
	refresh time.Duration
	expect  map[string][]manifest.Expectation

	mu     sync.Mutex
	runs   []liveRun
	readAt time.Time
	err    error
	// charts caches each cell's rendered charts by the cell's version.
	charts map[string]cellSVG
}

type cellSVG struct {
	version   string
	loss, acc []byte
}

func newLivePage(w *liveWatch, refresh time.Duration) *livePage {
	p := &livePage{w: w, refresh: refresh, expect: map[string][]manifest.Expectation{}, charts: map[string]cellSVG{}}
	for _, g := range w.graphs {
		p.expect[g.Manifest.File] = g.Manifest.Expect
	}
	return p
}

// current returns the runs, read again at most every half refresh however many pages ask.
func (p *livePage) current(ctx context.Context) ([]liveRun, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.readAt.IsZero() || time.Since(p.readAt) >= p.refresh/2 {
		p.runs, p.err = p.w.runs(ctx)
		p.readAt = time.Now()
	}
	return p.runs, p.err
}

func (p *livePage) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
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
		writeJSON(rw, map[string]any{"time": time.Now().UTC().Format(time.RFC3339), "store": p.w.dir, "runs": runs})
	case "/body":
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(rw, p.body(runs))
	case "/":
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(rw, p.page(runs))
	default:
		http.NotFound(rw, r)
	}
}

// pageStyle and pageScript are the page's only style and script, served inline: the page
// loads nothing else.
const pageStyle = `body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin-bottom:1.5em}td,th{padding:.2em .7em;text-align:left;border-bottom:1px solid #ddd}
.state{font-weight:600}.training{color:#1f6fb2}.finished{color:#2a7d2a}.failed,.stalled{color:#b3261e}.waiting,.interrupted{color:#777}
.cell{margin:1em 0 2em}.charts img{width:480px;margin-right:1em}.note{color:#666}`

const pageScript = `setInterval(function(){fetch('body',{cache:'no-store'}).then(function(r){return r.ok?r.text():null}).then(function(t){if(t!==null){document.getElementById('main').innerHTML=t}}).catch(function(){})},%d);`

// page is the whole page: the body and the script that refreshes it.
func (p *livePage) page(runs []liveRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fedpipe: live runs</title>\n<style>%s</style>\n", pageStyle)
	fmt.Fprintf(&b, "<noscript><meta http-equiv=\"refresh\" content=\"%d\"></noscript></head>\n<body>\n<h1>fedpipe: live runs</h1>\n", max(1, int(p.refresh.Seconds())))
	fmt.Fprintf(&b, "<div id=\"main\">%s</div>\n<script>%s</script>\n</body></html>\n", p.body(runs), fmt.Sprintf(pageScript, p.refresh.Milliseconds()))
	return b.String()
}

// body is the page's changing part: the time, a table of the runs and each cell's curves.
func (p *livePage) body(runs []liveRun) string {
	var b strings.Builder
	where := "store " + p.w.dir
	if p.w.remote != nil {
		where += ", remote " + p.w.remote.String()
	}
	fmt.Fprintf(&b, "<p class=\"note\">%s, %s. %s</p>\n", time.Now().Format("15:04:05"), html.EscapeString(where), html.EscapeString(summaryLine(runs)))
	b.WriteString("<table><tr><th>state</th><th>run</th><th>progress</th><th>latest</th></tr>\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "<tr data-key=\"%s\" data-state=\"%s\"><td class=\"state %s\">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			r.Key, r.State, r.State, r.State, html.EscapeString(r.Label), html.EscapeString(r.Detail), html.EscapeString(latestFigures(r.Journal)))
	}
	b.WriteString("</table>\n")
	for _, c := range cellsOf(runs, p.expect) {
		fmt.Fprintf(&b, "<div class=\"cell\" data-points=\"%d\" data-finished=\"%v\"><h2>%s</h2>\n", c.points(), allFinished(c), html.EscapeString(c.Cell))
		loss, acc, err := p.chartsOf(c)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "<p class=\"failed\">chart: %s</p>\n", html.EscapeString(err.Error()))
		case loss == nil && acc == nil:
			b.WriteString("<p class=\"note\">no rounds published yet")
			if c.finished() && c.points() == 0 {
				b.WriteString(" (computed before its train stage published progress; see fedpipe report)")
			}
			b.WriteString("</p>\n")
		default:
			b.WriteString("<div class=\"charts\">")
			for _, svg := range [][]byte{loss, acc} {
				if svg != nil {
					fmt.Fprintf(&b, "<img alt=\"chart\" src=\"data:image/svg+xml;base64,%s\">", base64.StdEncoding.EncodeToString(svg))
				}
			}
			b.WriteString("</div>\n")
		}
		b.WriteString("</div>\n")
	}
	return b.String()
}

// chartsOf renders a cell's charts, or returns them from the cache when nothing changed.
func (p *livePage) chartsOf(c *liveCell) (loss, acc []byte, err error) {
	id, v := c.Manifest+"\x00"+c.Cell, c.version()
	p.mu.Lock()
	cached, ok := p.charts[id]
	p.mu.Unlock()
	if ok && cached.version == v {
		return cached.loss, cached.acc, nil
	}
	if loss, acc, err = cellCharts(c); err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	p.charts[id] = cellSVG{version: v, loss: loss, acc: acc}
	p.mu.Unlock()
	return loss, acc, nil
}

// allFinished reports whether every seed of the cell has finished.
func allFinished(c *liveCell) bool {
	for _, r := range c.Runs {
		if r.State != live.Finished {
			return false
		}
	}
	return true
}
