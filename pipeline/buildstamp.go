package pipeline

import (
	"runtime/debug"
	"strings"
)

// BuildStamp returns the commit this binary was built from, whether its tree was
// modified, and the commit's time: from the build's VCS stamp, else from commit, the value
// a build without one was given ("<hash>" or "<hash>-modified"; "" for none).
func BuildStamp(commit string) (rev string, modified bool, when string) {
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

// StampedBuild is the BuildInfo of this binary, of release version, running on the backend
// whose id is backendID: its commit (BuildStamp, given commit) is suffixed "-modified" when
// built from a modified tree.
func StampedBuild(version, commit, backendID string) BuildInfo {
	rev, modified, _ := BuildStamp(commit)
	if modified {
		rev += "-modified"
	}
	return BuildInfo{Version: version, Commit: rev, Backend: backendID}
}
