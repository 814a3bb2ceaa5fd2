package gomlx

import (
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/fedpipe/fedpipe/gomlx/xlaenv"
)

// reexecMarker is set in the environment of a fedpipe that re-executed itself for XLA, so
// it does so at most once.
const reexecMarker = "FEDPIPE_XLA_REEXEC"

// ReexecForXLA restarts this program (with the command-line arguments args, after the
// program's name) with the NVIDIA library folders on $LD_LIBRARY_PATH when args' --backend
// or $GOMLX_BACKEND ask for an xla backend whose plugin needs them: the loader reads that
// path once, when a process starts. It returns only when no restart is needed or possible;
// a backend that does not resolve fails later, where the command resolves it, with its own
// message.
func ReexecForXLA(args []string) {
	if !XLACompiled || os.Getenv(reexecMarker) != "" {
		return
	}
	env, err := XLAProcessEnv(backendArg(args))
	if err != nil {
		return
	}
	restart := false
	for _, kv := range env {
		if kv[0] == xlaenv.EnvLibraryPath {
			restart = true
		}
		if os.Setenv(kv[0], kv[1]) != nil {
			return
		}
	}
	if !restart {
		return
	}
	self, err := os.Executable()
	if err != nil {
		return
	}
	os.Setenv(reexecMarker, "1")
	err = syscall.Exec(self, append([]string{os.Args[0]}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "fedpipe: could not restart with $%s set for the XLA plugin (%v); going on without\n", xlaenv.EnvLibraryPath, err)
}

// backendArg is the value of the first --backend flag in args ("" if none).
func backendArg(args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, name := range []string{"--backend", "-backend"} {
			if v, ok := strings.CutPrefix(a, name+"="); ok {
				return v
			}
			if a == name && i+1 < len(args) {
				return args[i+1]
			}
		}
	}
	return ""
}
