package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results/listing"
)

// wantCommit sets the commit ldflag for the test and returns the commit results must
// record: the build's VCS stamp when the test binary has one, else that ldflag.
func wantCommit(t *testing.T) string {
	t.Helper()
	old := commit
	commit = "feedc0ffee42"
	t.Cleanup(func() { commit = old })
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				t.Logf("test binary stamped with commit %s", s.Value)
				rev := s.Value
				for _, s := range bi.Settings {
					if s.Key == "vcs.modified" && s.Value == "true" {
						rev += "-modified"
					}
				}
				return rev
			}
		}
	}
	return commit
}

// checkProvenance asserts that p is sane for a result this process just computed.
func checkProvenance(t *testing.T, what string, p *pipeline.Provenance, commit string) {
	t.Helper()
	if p == nil {
		t.Errorf("%s: no provenance", what)
		return
	}
	if p.Commit != commit || p.Version != version {
		t.Errorf("%s: commit %q version %q, want %q %q", what, p.Commit, p.Version, commit, version)
	}
	if !strings.HasPrefix(p.Backend, "gomlx@") || p.CPU == "" || p.Threads != runtime.GOMAXPROCS(0) {
		t.Errorf("%s: backend %q cpu %q threads %d (GOMAXPROCS %d)", what, p.Backend, p.CPU, p.Threads, runtime.GOMAXPROCS(0))
	}
	// A Go process that has trained a model holds well over 1 MiB; no process holds a TiB.
	if p.Seconds <= 0 || p.PeakRSS < 1<<20 || p.PeakRSS > 1<<40 {
		t.Errorf("%s: wall %v s, peak RSS %d bytes", what, p.Seconds, p.PeakRSS)
	}
	d, err := time.Parse(time.RFC3339, p.Date)
	if err != nil || time.Since(d) > time.Hour || time.Until(d) > time.Minute {
		t.Errorf("%s: date %q (%v)", what, p.Date, err)
	}
}

// TestProvenanceEverywhere: a run records each stage's provenance with its result, and
// run --json, ls (--json, --csv, --provenance), report (markdown, CSV table, --json) and
// verify --json show it.
func TestProvenanceEverywhere(t *testing.T) {
	want := wantCommit(t)
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest+"expect:\n  - {method: local, metric: final_pooled, published: 50, tolerance: 100}\n")
	code, out, errs := fedpipe(t, "run", m, "--store", store, "--json")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	var ran struct {
		Stages []struct {
			Name       string               `json:"name"`
			Provenance *pipeline.Provenance `json:"provenance"`
		} `json:"stages"`
	}
	if err := json.Unmarshal([]byte(out), &ran); err != nil || len(ran.Stages) == 0 {
		t.Fatalf("run --json: %v\n%s", err, out)
	}
	for _, s := range ran.Stages {
		checkProvenance(t, "run --json "+s.Name, s.Provenance, want)
	}

	code, out, errs = fedpipe(t, "ls", m, "--store", store, "--json")
	var ls struct {
		Runs []listing.Row `json:"runs"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &ls) != nil || len(ls.Runs) != 2 {
		t.Fatalf("ls --json: exit %d\n%s%s", code, out, errs)
	}
	for _, r := range ls.Runs {
		checkProvenance(t, "ls --json "+r.Label, r.Provenance, want)
	}
	_, out, _ = fedpipe(t, "ls", m, "--store", store, "--csv")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.Contains(lines[0], ",commit,") || !strings.Contains(lines[1], ","+want+",") {
		t.Errorf("ls --csv lacks the commit:\n%s", out)
	}
	_, out, _ = fedpipe(t, "ls", m, "--store", store)
	if strings.Contains(out, want) {
		t.Errorf("the default ls table shows provenance:\n%s", out)
	}
	_, out, _ = fedpipe(t, "ls", m, "--store", store, "--provenance")
	if !strings.Contains(out, "peak RSS") || !strings.Contains(out, want[:12]) {
		t.Errorf("ls --provenance lacks the provenance:\n%s", out)
	}

	rdir := filepath.Join(dir, "report")
	code, out, errs = fedpipe(t, "report", m, "--store", store, "-o", rdir, "--json")
	var rep struct {
		Provenance []struct {
			Config string `json:"config"`
			pipeline.Provenance
		} `json:"provenance"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Provenance) != 2 {
		t.Fatalf("report --json: exit %d\n%s%s", code, out, errs)
	}
	for _, r := range rep.Provenance {
		checkProvenance(t, "report --json "+r.Config, &r.Provenance, want)
	}
	md, _ := os.ReadFile(filepath.Join(rdir, "report.md"))
	if !strings.Contains(string(md), "## Provenance") || strings.Count(string(md), want[:12]) != 2 {
		t.Errorf("report.md lacks a provenance line per run:\n%s", md)
	}
	csv, _ := os.ReadFile(filepath.Join(rdir, "tables", "provenance.csv"))
	if strings.Count(string(csv), want) != 2 || !strings.Contains(string(csv), "peak_rss_bytes") {
		t.Errorf("tables/provenance.csv:\n%s", csv)
	}

	code, out, errs = fedpipe(t, "verify", m, "--store", store, "--json")
	var ver struct {
		Cells []struct {
			Provenance []struct {
				Run      string               `json:"run"`
				Train    *pipeline.Provenance `json:"train"`
				Measured *pipeline.Provenance `json:"measured"`
			} `json:"provenance"`
		} `json:"cells"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &ver) != nil || len(ver.Cells) != 1 || len(ver.Cells[0].Provenance) != 1 {
		t.Fatalf("verify --json: exit %d\n%s%s", code, out, errs)
	}
	p := ver.Cells[0].Provenance[0]
	if p.Run != "local seed=0" {
		t.Errorf("verify's provenance is of run %q", p.Run)
	}
	checkProvenance(t, "verify train", p.Train, want)
	checkProvenance(t, "verify measured", p.Measured, want)
}
