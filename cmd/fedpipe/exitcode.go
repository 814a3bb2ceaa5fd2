package main

import (
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
)

// exitEnvironment is the exit code of a failure of the machine or of data kept on it
// rather than of the input: a full disk or quota, a permission refused, a read-only
// filesystem, an I/O error, a store whose tables Badger cannot decode, a damaged or missing
// kept result, a special file (a named
// pipe, a device) or an oversize file where a stored object belongs. Rerunning the same
// command after the cause is fixed goes on where it stopped.
const exitEnvironment = 4

// environmentErrnos are the system errors exitEnvironment covers.
var environmentErrnos = []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EACCES, syscall.EPERM,
	syscall.EROFS, syscall.EIO}

// isEnvironment reports whether err is a failure exitEnvironment covers.
func isEnvironment(err error) bool {
	if errors.Is(err, artifacts.ErrNoSpace) || errors.Is(err, artifacts.ErrDamaged) || errors.Is(err, pipeline.ErrKeptDamaged) ||
		errors.Is(err, remote.ErrUnreadableObject) {
		return true
	}
	for _, e := range environmentErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// exitCodeOf is the exit code of a command that fails with err: exitInvalid for invalid
// input, exitEnvironment for what isEnvironment covers, else exitFailure.
func exitCodeOf(err error) int {
	switch {
	case manifest.IsInvalid(err):
		return exitInvalid
	case isEnvironment(err):
		return exitEnvironment
	}
	return exitFailure
}

// storeNotices returns an artifacts.Options.Logf that prints the store's notices (whom a
// command waits for, what it cleared) on stderr, prefixed with the command.
func storeNotices(prefix string, stderr io.Writer) func(string, ...any) {
	return func(format string, a ...any) {
		fmt.Fprintf(stderr, "%s: store: %s\n", prefix, fmt.Sprintf(format, a...))
	}
}
