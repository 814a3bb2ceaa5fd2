package main

import (
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/artifacts/storedir"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/verify/kept"
)

// Exit codes (exitEnvironment below; 3, a verify mismatch, is verify's own).
const (
	exitOK          = 0
	exitFailure     = 1
	exitInvalid     = 2
	exitInterrupted = 130
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
	if errors.Is(err, artifacts.ErrNoSpace) || errors.Is(err, artifacts.ErrDamaged) || errors.Is(err, kept.ErrDamaged) ||
		errors.Is(err, remote.ErrUnreadableObject) || errors.Is(err, remote.ErrUnbound) ||
		errors.Is(err, pipeline.ErrWrongCell) {
		return true
	}
	if sp := (*storedir.PathError)(nil); errors.As(err, &sp) && !sp.Invalid {
		return true // a store path that loops or cannot be read
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

// exitError ends a command other than with success: its exit code and the line that says
// why, which call.exit prints on stderr (and, under --json, as {"error", "exit_code"} on
// stdout). An empty msg means the command has already said why.
type exitError struct {
	code  int
	msg   string // the whole line, "fedpipe CMD: what went wrong"
	json  string // the JSON error's text where it is not msg (failure: the error without the prefix)
	hint  string // printed on stderr after msg, not part of the JSON error ("Run 'fedpipe CMD --help'…")
	usage bool   // also print the command's usage after the line
}

func (e *exitError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.msg
}

// failf ends a command with code and a line formatted as fmt.Sprintf does; the line names
// the command itself ("fedpipe gc: …").
func failf(code int, format string, a ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, a...)}
}

// usageErr is failf(exitInvalid, …) followed by the command's usage.
func usageErr(format string, a ...any) error {
	return &exitError{code: exitInvalid, msg: fmt.Sprintf(format, a...), usage: true}
}

// failure ends a command with err, printed after prefix ("fedpipe" or "fedpipe CMD") on
// stderr and as it is in the JSON error, and the exit code exitCodeOf gives it (2 for
// invalid input, 4 for the environment, else 1).
func failure(prefix string, err error) error {
	return &exitError{code: exitCodeOf(err), msg: prefix + ": " + err.Error(), json: err.Error()}
}

// exitErr ends a command with code after it has said why itself (nil for exitOK).
func exitErr(code int) error {
	if code == exitOK {
		return nil
	}
	return &exitError{code: code}
}

// errDone ends a command with exit 0 early, having done what was asked (--help).
var errDone = &exitError{code: exitOK}
