package kept

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
)

func TestTableManifests(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"fedobp-t2.yaml", "table1.yaml", "quickstart.yaml", "dmpfl-a.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := TableManifests(dir)
	want := []string{filepath.Join(dir, "dmpfl-a.yaml"), filepath.Join(dir, "fedobp-t2.yaml"), filepath.Join(dir, "table1.yaml")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("TableManifests = %v, %v; want %v", got, err, want)
	}
	if _, err := TableManifests(t.TempDir()); !manifest.IsInvalid(err) {
		t.Errorf("an empty folder: %v, want an input error", err)
	}
}

func TestProvenanceLine(t *testing.T) {
	if got := provenanceLine(nil); got != "no record" {
		t.Errorf("nil: %q", got)
	}
	if got := provenanceLine(&pipeline.Provenance{}); got != "no record" {
		t.Errorf("empty: %q", got)
	}
	p := &pipeline.Provenance{CPU: "AMD EPYC", Threads: 16, Backend: "fpfast", Seconds: 3725, Date: "2026-01-02", Commit: "0123456789abcdef0123"}
	got := provenanceLine(p)
	for _, want := range []string{"AMD EPYC, 16 threads", "fpfast", "1h2m0s", "2026-01-02", "commit 0123456789ab"} {
		if !strings.Contains(got, want) {
			t.Errorf("provenanceLine = %q, lacks %q", got, want)
		}
	}
}

func TestMissingInit(t *testing.T) {
	there := filepath.Join(t.TempDir(), "w.safetensors")
	if err := os.WriteFile(there, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m := &manifest.Manifest{}
	if got := missingInit(m); got != "" {
		t.Errorf("no model.init: %q", got)
	}
	m.Model.Init = there
	if got := missingInit(m); got != "" {
		t.Errorf("present file: %q", got)
	}
	m.Model.Init = there + ".gone"
	if got := missingInit(m); !strings.HasPrefix(got, "model.init: "+m.Model.Init+" (") {
		t.Errorf("missing file: %q", got)
	}
}

// A stage trained in parts shows the total wall time over its parts, not the last part's
// (the kept lgfedavg cell: 23 minutes, then 1h12m: "1h35m0s in all"); a part without a
// recorded time makes it a lower bound.
func TestProvenanceLineTotalsTheParts(t *testing.T) {
	part := func(from, to int, secs float64) pipeline.Segment {
		return pipeline.Segment{From: from, To: to, Provenance: pipeline.Provenance{CPU: "AMD EPYC", Seconds: secs}}
	}
	p := &pipeline.Provenance{CPU: "AMD EPYC", Seconds: 72 * 60, Segments: []pipeline.Segment{part(1, 100, 23*60), part(101, 400, 72*60)}}
	if line := provenanceLine(p); !strings.Contains(line, "AMD EPYC, ") || !strings.Contains(line, ", 1h35m0s in all") {
		t.Errorf("two parts: %s", line)
	}
	p.Segments[0].Seconds = 0
	if line := provenanceLine(p); !strings.Contains(line, "at least 1h12m0s in all (a part's time is not recorded)") {
		t.Errorf("a part without its time: %s", line)
	}
	one := &pipeline.Provenance{CPU: "AMD EPYC", Seconds: 3600}
	if line := provenanceLine(one); !strings.Contains(line, ", 1h0m0s") || strings.Contains(line, "in all") {
		t.Errorf("one process: %s", line)
	}
}
