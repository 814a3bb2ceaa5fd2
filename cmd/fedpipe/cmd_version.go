package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
)

// version is fedpipe's release; builds may set it with -ldflags "-X main.version=…".
var version = "0.18.0-dev"

// commit is the git commit the binary was built from when the build cannot stamp it (Go's
// VCS stamping off, e.g. GOFLAGS=-buildvcs=false): `make build` sets it with
// -ldflags "-X main.commit=…" (suffixed "-modified" for a dirty tree).
var commit = ""

// versionInfo is what `fedpipe version` prints.
type versionInfo struct {
	Version string `json:"version"`
	// Commit and Modified come from the build's VCS stamp (absent in `go test` builds).
	Commit    string `json:"commit,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	Time      string `json:"commit_time,omitempty"`
	GoVersion string `json:"go"`
	Platform  string `json:"platform"`
	// Backend is the numeric backend a run would use (its id, part of every key).
	Backend string `json:"backend"`
	// KeyVersions are what stage keys are computed with.
	pipeline.KeyVersions
}

// cmdVersion prints fedpipe's version, commit, backend and key-scheme version.
var cmdVersion = &command{
	name:      "version",
	aliases:   []string{"--version"},
	overview:  []string{"version                   version, commit, backend, key scheme"},
	usageLine: "fedpipe version [--json]",
	long:      "Prints fedpipe's version, the commit it was built from, the numeric backend and the key-scheme,\nstage code versions and models' and methods' revisions (results cached under other versions are recomputed).",
	flags:     withFlags(versionCmd),
}

// versionFlags are version's flags.
type versionFlags struct {
	json    bool
	backend string
}

func (f *versionFlags) declare(fs *pflag.FlagSet, _ flagGroup) {
	fs.BoolVar(&f.json, "json", false, "print one JSON object")
	fs.StringVar(&f.backend, "backend", "", "GoMLX backend to report (default $GOMLX_BACKEND, else the built-in CPU backend)")
}

// versionCmd is `fedpipe version`.
func versionCmd(c *call, f *versionFlags, _ []string) error {
	stdout := c.stdout
	backend, err := model.ResolveBackend(f.backend)
	if err != nil {
		return failure("fedpipe version", err)
	}
	v := versionInfo{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Backend: model.BackendID(backend), KeyVersions: pipeline.CurrentKeyVersions()}
	v.Commit, v.Modified, v.Time = pipeline.BuildStamp(commit)
	if f.json {
		return writeJSON(stdout, v)
	}
	commit := v.Commit
	if commit == "" {
		commit = "unknown (not built from a git checkout)"
	} else if v.Modified {
		commit += " (modified)"
	}
	fmt.Fprintf(stdout, "fedpipe %s\ncommit:     %s\ngo:         %s %s\nbackend:    %s\n", v.Version, commit, v.GoVersion, v.Platform, v.Backend)
	v.KeyVersions.WriteText(stdout)
	return nil
}

// buildInfo describes this binary, running on backend, for the provenance of results
// (pipeline.StampedBuild).
func buildInfo(backend string) pipeline.BuildInfo {
	return pipeline.StampedBuild(version, commit, model.BackendID(backend))
}
