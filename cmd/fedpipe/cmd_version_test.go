package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
)

// `fedpipe version` names what keys are computed with: the stage code versions and every
// method revised since its start (manifest.MethodDef.Revision, and BNRevision for models
// with BatchNorm), in text and in JSON.
func TestVersionNamesCodeVersionsAndMethodRevisions(t *testing.T) {
	code, stdout, _ := fedpipe(t, "version", "--json")
	var v versionInfo
	if err := json.Unmarshal([]byte(stdout), &v); code != exitOK || err != nil {
		t.Fatalf("version --json: exit %d, %v: %s", code, err, stdout)
	}
	if v.CodeVersions[manifest.KindTrain] != pipeline.CodeVersions[manifest.KindTrain] {
		t.Errorf("code versions %v", v.CodeVersions)
	}
	d, _ := manifest.LookupMethod("lgfedavg")
	if d.BNRevision == 0 || d.Revision != 0 || v.MethodBNRevisions["lgfedavg"] != d.BNRevision {
		t.Errorf("BatchNorm revisions %v, want lgfedavg=%d", v.MethodBNRevisions, d.BNRevision)
	}
	if _, ok := v.MethodRevisions["lgfedavg"]; ok {
		t.Error("lgfedavg's BatchNorm revision is listed as a revision on every model")
	}
	if d, _ := manifest.LookupMethod("feddpa"); d.Revision == 0 || v.MethodRevisions["feddpa"] != d.Revision {
		t.Errorf("revisions %v, want feddpa=%d", v.MethodRevisions, d.Revision)
	}
	if _, ok := v.MethodBNRevisions["fedavg"]; ok {
		t.Error("an unrevised method is listed")
	}
	_, text, _ := fedpipe(t, "version")
	if !strings.Contains(text, "\nmethods:") || !strings.Contains(text, "\nmethods on BatchNorm models:") || !strings.Contains(text, " feddpa=") {
		t.Errorf("text output lacks the methods' revisions:\n%s", text)
	}
}
