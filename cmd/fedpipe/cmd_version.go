package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/model/arch"
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
	// KeyScheme and CodeVersions are what stage keys are computed with.
	KeyScheme    string         `json:"key_scheme"`
	CodeVersions map[string]int `json:"code_versions"`
	// ArchRevisions are the architectures' own code versions, for those above 0
	// (arch.Revisions; part of the keys of every stage that has a model).
	ArchRevisions map[string]int `json:"arch_revisions"`
	// MethodRevisions are the methods' own code versions, for those above 0
	// (manifest.MethodDef.Revision; part of their train stages' keys).
	MethodRevisions map[string]int `json:"method_revisions"`
	// MethodBNRevisions are the methods' code versions on models with BatchNorm, for those
	// above 0 (manifest.MethodDef.BNRevision; part of such runs' train stage keys).
	MethodBNRevisions map[string]int `json:"method_bn_revisions"`
	// MethodOptionRevisions are the methods' code versions for one value of a word
	// parameter, by "method[impl=paper]" (manifest.MethodDef.OptionRevisions; part of the
	// train stage keys of the runs with that value).
	MethodOptionRevisions map[string]int `json:"method_option_revisions"`
}

// methodOptionRevisions lists the registered methods' revisions for one value of a word
// parameter above 0, by "method[name=value]".
func methodOptionRevisions() map[string]int {
	out := map[string]int{}
	for _, name := range manifest.MethodNames() {
		d, _ := manifest.LookupMethod(name)
		for opt, r := range d.OptionRevisions {
			if r > 0 {
				out[name+"["+opt+"]"] = r
			}
		}
	}
	return out
}

// methodRevisions lists the registered methods whose revision, the one of picks out of
// their registration (Revision or BNRevision), is above 0.
func methodRevisions(of func(manifest.MethodDef) int) map[string]int {
	out := map[string]int{}
	for _, name := range manifest.MethodNames() {
		if d, _ := manifest.LookupMethod(name); of(d) > 0 {
			out[name] = of(d)
		}
	}
	return out
}

// versionCmd prints fedpipe's version, commit, backend and key-scheme version.
func versionCmd(c *call) error {
	args, stdout := c.args, c.stdout
	fs := c.flags()
	asJSON := fs.Bool("json", false, "print one JSON object")
	backendFlag := fs.String("backend", "", "GoMLX backend to report (default $GOMLX_BACKEND, else the built-in CPU backend)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: fedpipe version [--json]\n\nPrints fedpipe's version, the commit it was built from, the numeric backend and the key-scheme,\nstage code versions and models' and methods' revisions (results cached under other versions are recomputed).\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	backend, err := model.ResolveBackend(*backendFlag)
	if err != nil {
		return failure("fedpipe version", err)
	}
	v := versionInfo{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Backend: model.BackendID(backend), KeyScheme: pipeline.KeyScheme, CodeVersions: pipeline.CodeVersions,
		ArchRevisions:         arch.Revisions,
		MethodRevisions:       methodRevisions(func(d manifest.MethodDef) int { return d.Revision }),
		MethodBNRevisions:     methodRevisions(func(d manifest.MethodDef) int { return d.BNRevision }),
		MethodOptionRevisions: methodOptionRevisions()}
	v.Commit, v.Modified, v.Time = buildStamp()
	if *asJSON {
		return writeJSON(stdout, v)
	}
	commit := v.Commit
	if commit == "" {
		commit = "unknown (not built from a git checkout)"
	} else if v.Modified {
		commit += " (modified)"
	}
	fmt.Fprintf(stdout, "fedpipe %s\ncommit:     %s\ngo:         %s %s\nbackend:    %s\nkey scheme: %s\n", v.Version, commit, v.GoVersion, v.Platform, v.Backend, v.KeyScheme)
	printVersions(stdout, "stage code:", v.CodeVersions)
	printVersions(stdout, "models:    ", v.ArchRevisions)
	printVersions(stdout, "methods:   ", v.MethodRevisions)
	printVersions(stdout, "methods on BatchNorm models:", v.MethodBNRevisions)
	printVersions(stdout, "methods' settings:", v.MethodOptionRevisions)
	return nil
}

// printVersions prints a line of name=version pairs in name order ("none" when empty).
func printVersions(w io.Writer, label string, versions map[string]int) {
	names := make([]string, 0, len(versions))
	for k := range versions {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprint(w, label)
	if len(names) == 0 {
		fmt.Fprint(w, " none")
	}
	for _, k := range names {
		fmt.Fprintf(w, " %s=%d", k, versions[k])
	}
	fmt.Fprintln(w)
}

// buildStamp returns the commit the binary was built from, whether the tree was modified,
// and the commit's time: from the build's VCS stamp, else from the commit ldflag.
func buildStamp() (rev string, modified bool, when string) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			case "vcs.time":
				when = s.Value
			}
		}
	}
	if rev == "" && commit != "" {
		rev = strings.TrimSuffix(commit, "-modified")
		modified = strings.HasSuffix(commit, "-modified")
	}
	return rev, modified, when
}

// buildInfo describes this binary, running on backend, for the provenance of results: its
// commit is suffixed "-modified" when built from a modified tree.
func buildInfo(backend string) pipeline.BuildInfo {
	rev, modified, _ := buildStamp()
	if modified {
		rev += "-modified"
	}
	return pipeline.BuildInfo{Version: version, Commit: rev, Backend: model.BackendID(backend)}
}
