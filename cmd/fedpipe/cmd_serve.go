package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/screens/page"
)

// defaultServeAddr is where serve listens unless --addr says otherwise: the loopback only,
// so the page is reached from elsewhere through an SSH tunnel (docs/commands.md).
const defaultServeAddr = "127.0.0.1:8150"

// cmdServe is `fedpipe serve MANIFEST... [--remote URL]`: a read-only web page of every run
// of the manifests with its curves growing while it trains (live/page).
var cmdServe = &command{
	name:      "serve",
	overview:  []string{"serve MANIFEST... [--remote URL]   a local web page of the runs, curves growing as they train"},
	usageLine: "fedpipe serve MANIFEST... [--remote URL] [flags]",
	long: "Serves a read-only web page of every run of the manifests, its curves growing while it trains\n" +
		"(one chart per metric with every method overlaid, seeds as a mean with a min–max band, an extended\n" +
		"run's earlier rounds carried, published numbers as reference lines), its state (waiting, training\n" +
		"round r of T with its ETA, finished, failed or stalled) and who holds it. It reads the progress journals train stages publish in the store (and\n" +
		"on --remote, for workers) and never waits for or slows a run. Everything the page needs is served\n" +
		"by fedpipe itself. From a laptop:  ssh -L 8150:127.0.0.1:8150 HOST  then open http://127.0.0.1:8150/",
	groups: statusGroups,
	flags:  withFlags(serveCmd),
}

// serveFlags are serve's flags.
type serveFlags struct {
	commonFlags
	addr    string
	refresh time.Duration
}

func (f *serveFlags) declare(fs *pflag.FlagSet, g flagGroup) {
	f.commonFlags.declare(fs, g)
	fs.StringVar(&f.addr, "addr", defaultServeAddr, "address to listen on (host:port; port 0 picks a free one). Keep it on 127.0.0.1 and reach it through an SSH tunnel")
	fs.DurationVar(&f.refresh, "refresh", 2*time.Second, "how often the page fetches the runs' progress")
}

// serveCmd is `fedpipe serve MANIFEST...`.
func serveCmd(c *call, f *serveFlags, args []string) error {
	stdout := c.stdout
	ctx, w, stop, err := startWatch("serve", args, &f.commonFlags, "refresh", &f.refresh, 200*time.Millisecond, c.stderr)
	if err != nil {
		return err
	}
	defer stop()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return failf(exitInvalid, "fedpipe serve: --addr %s: %v", f.addr, err)
	}
	handler := page.New(w, f.refresh)
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
