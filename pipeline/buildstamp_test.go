package pipeline

import (
	"runtime/debug"
	"testing"
)

// Without a VCS stamp (as in test binaries), the commit a build was given stands in, its
// "-modified" suffix read as a modified tree and kept in the provenance's commit.
func TestBuildStampFallback(t *testing.T) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				t.Skip("this test binary carries a VCS stamp")
			}
		}
	}
	if rev, modified, _ := BuildStamp("abc123-modified"); rev != "abc123" || !modified {
		t.Errorf("BuildStamp(abc123-modified) = %q, %v", rev, modified)
	}
	if rev, modified, _ := BuildStamp("abc123"); rev != "abc123" || modified {
		t.Errorf("BuildStamp(abc123) = %q, %v", rev, modified)
	}
	if rev, _, _ := BuildStamp(""); rev != "" {
		t.Errorf("BuildStamp(\"\") = %q", rev)
	}
	b := StampedBuild("1.0", "abc123-modified", "gomlx@v0/fpfast/x/float32")
	if b != (BuildInfo{Version: "1.0", Commit: "abc123-modified", Backend: "gomlx@v0/fpfast/x/float32"}) {
		t.Errorf("StampedBuild: %+v", b)
	}
}
