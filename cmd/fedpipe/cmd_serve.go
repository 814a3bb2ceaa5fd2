package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/fedpipe/fedpipe/screens/page"
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
			"(one chart per metric with every method overlaid, seeds as a mean with a min–max band, an extended\n"+
			"run's earlier rounds carried, published numbers as reference lines), its state (waiting, training\n"+
			"round r of T with its ETA, finished, failed or stalled) and who holds it. It reads the progress journals train stages publish in the store (and\n"+
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
	handler := page.New(w, *refresh)
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
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
