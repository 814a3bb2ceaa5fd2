package main

import (
	"fmt"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof on http.DefaultServeMux
	"os"
)

// With FEDPIPE_PPROF=host:port set, fedpipe serves Go's profiles (net/http/pprof) there for
// as long as it runs: `go tool pprof http://host:port/debug/pprof/heap` (or /profile for 30 s
// of CPU) on a running `fedpipe run` or `fedpipe bench`. A diagnostic switch; unset, nothing
// listens.
func init() {
	addr := os.Getenv("FEDPIPE_PPROF")
	if addr == "" {
		return
	}
	go func() {
		if err := http.ListenAndServe(addr, nil); err != nil {
			fmt.Fprintf(os.Stderr, "fedpipe: FEDPIPE_PPROF=%s: %v\n", addr, err)
		}
	}()
}
