package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// parseFlags parses a subcommand's flags. `--help` prints the command's usage (fs.Usage,
// which writes to fs.Output()) on stdout and ends the command with exit 0; a flag error
// (an unknown flag, a value that does not parse, a missing value) is printed on stderr with
// a pointer to --help — and as a JSON object on stdout when --json was given — and ends it
// with exit 2, as does a value no command can mean (checkFlagValues). ok is true when the
// command should go on.
func parseFlags(fs *pflag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	fs.SetOutput(stdout)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	if err == nil {
		code := checkFlagValues(fs, stderr)
		return code, code == exitOK
	}
	if errors.Is(err, pflag.ErrHelp) {
		return exitOK, false
	}
	msg := fmt.Sprintf("fedpipe %s: %v", fs.Name(), err)
	fmt.Fprintf(stderr, "%s\nRun 'fedpipe %s --help' for its flags.\n", msg, fs.Name())
	if wantsJSON(args) {
		writeJSON(stdout, errorJSON{Error: msg, ExitCode: exitInvalid})
	}
	return exitInvalid, false
}

// wantsJSON says whether args ask for --json, for errors found before or while the flags are
// parsed.
func wantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
}

// errorJSON is what a command given --json prints on stdout when it fails.
type errorJSON struct {
	Error    string `json:"error"`
	ExitCode int    `json:"exit_code"`
}

// failure prints err as the command's error (prefix is "fedpipe" or "fedpipe CMD") on stderr
// and, when asJSON, as a JSON object on stdout, and returns the exit code: 2 for invalid
// input (manifest, overrides, flags, missing or malformed data), else 1.
func failure(prefix string, err error, asJSON bool, stdout, stderr io.Writer) int {
	code := exitCodeOf(err)
	fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
	if asJSON {
		writeJSON(stdout, errorJSON{Error: strings.TrimSpace(err.Error()), ExitCode: code})
	}
	return code
}

// jsonOut is the stdout of a command given --json: it records whether anything was
// written, so that an error the command printed only as text can still be given as JSON.
type jsonOut struct {
	w     io.Writer
	wrote bool
}

func (j *jsonOut) Write(p []byte) (int, error) {
	j.wrote = j.wrote || len(p) > 0
	return j.w.Write(p)
}

// runWithJSONErrors runs a command given --json; when it fails without writing anything on
// stdout (a usage error such as a missing argument), its last error line becomes the
// JSON object {"error", "exit_code"} on stdout.
func runWithJSONErrors(args []string, stdout, stderr io.Writer) int {
	out := &jsonOut{w: stdout}
	var errs strings.Builder
	code := run(args, out, io.MultiWriter(stderr, &errs))
	if code != exitOK && !out.wrote {
		msg := ""
		for _, l := range strings.Split(strings.TrimSpace(errs.String()), "\n") {
			if strings.HasPrefix(l, "fedpipe") {
				msg = l
				break
			}
		}
		writeJSON(stdout, errorJSON{Error: msg, ExitCode: code})
	}
	return code
}
