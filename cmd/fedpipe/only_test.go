package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --only on ls, export and verify: the runs (and, for verify, the expect entries) of the
// named labels alone; verify --run --only computes those runs and the ones their entries
// are compared with, nothing else; a label the manifest does not have is exit 2, naming
// the manifest's labels.
func TestOnlyOnLsExportVerify(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest+`  - name: ditto
expect:
  - {method: local, metric: final_pooled, above: fedavg, tolerance: 1}
  - {method: ditto, metric: final_pooled, published: 50, tolerance: 50}
`)
	code, out, errs := fedpipe(t, "verify", m, "--store", store, "--run", "--only", "local", "--json")
	if code != exitOK {
		t.Fatalf("verify --run --only local: exit %d\n%s%s", code, out, errs)
	}
	var v struct {
		Cells []struct {
			Method, Verdict string
		} `json:"cells"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Cells) != 1 || v.Cells[0].Method != "local" || v.Cells[0].Verdict != "pass" {
		t.Fatalf("cells %+v (%v)\n%s", v.Cells, err, out)
	}

	// ls: ditto never ran (verify ran local and fedavg only); --only lists one row.
	var ls struct {
		Runs []struct {
			Method, State string
		} `json:"runs"`
	}
	_, out, _ = fedpipe(t, "ls", m, "--store", store, "--json")
	if err := json.Unmarshal([]byte(out), &ls); err != nil || len(ls.Runs) != 3 {
		t.Fatalf("ls: %+v (%v)", ls.Runs, err)
	}
	states := map[string]string{}
	for _, r := range ls.Runs {
		states[r.Method] = r.State
	}
	if states["local"] != "cached" || states["fedavg"] != "cached" || states["ditto"] != "missing" {
		t.Errorf("after verify --run --only local: %v, want local and fedavg cached, ditto missing", states)
	}
	_, out, _ = fedpipe(t, "ls", m, "--store", store, "--json", "--only", "fedavg")
	if err := json.Unmarshal([]byte(out), &ls); err != nil || len(ls.Runs) != 1 || ls.Runs[0].Method != "fedavg" {
		t.Errorf("ls --only fedavg: %+v (%v)", ls.Runs, err)
	}

	// Two manifests: each keeps the labels it has; a label neither has names both files.
	other := filepath.Join(dir, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	m2 := writeManifest(t, other, tinyManifest)
	_, out, _ = fedpipe(t, "ls", m, m2, "--store", store, "--json", "--only", "ditto")
	if err := json.Unmarshal([]byte(out), &ls); err != nil || len(ls.Runs) != 1 || ls.Runs[0].Method != "ditto" {
		t.Errorf("ls of two manifests --only ditto: %+v (%v)", ls.Runs, err)
	}
	if code, _, errs := fedpipe(t, "ls", m, m2, "--store", store, "--only", "nope"); code != exitInvalid || !strings.Contains(errs, m2) {
		t.Errorf("ls of two manifests --only nope: exit %d\n%s", code, errs)
	}

	// export --only: the folders of local's stages and its partition, none of fedavg's.
	outDir := filepath.Join(dir, "out")
	if code, _, errs := fedpipe(t, "export", m, "--store", store, "-o", outDir, "--only", "local", "--format", "csv"); code != exitOK {
		t.Fatalf("export --only local: exit %d\n%s", code, errs)
	}
	entries, err := os.ReadDir(outDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	joined := strings.Join(names, " ")
	if !strings.Contains(joined, "train_local") || strings.Contains(joined, "fedavg") || !strings.Contains(joined, "partition") {
		t.Errorf("export --only local wrote %v", names)
	}

	// Unknown labels and a label without expect entries are input errors.
	for _, args := range [][]string{{"ls", m, "--only", "nope"}, {"export", m, "-o", outDir, "--only", "nope"},
		{"verify", m, "--only", "nope"}, {"verify", m, "--only", "fedavg"}} {
		code, _, errs := fedpipe(t, append(args, "--store", store)...)
		if code != exitInvalid || !strings.Contains(errs, "fedavg") {
			t.Errorf("%v: exit %d, want %d with the manifest's labels\n%s", args, code, exitInvalid, errs)
		}
	}
}
