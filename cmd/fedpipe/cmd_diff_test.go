package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/results/compare"
	"github.com/fedpipe/fedpipe/results/listing"
)

type diffOut struct {
	A, B   string
	Params []compare.Param
	Runs   []compare.Run
}

func diffJSON(t *testing.T, args ...string) diffOut {
	t.Helper()
	code, stdout, errs := fedpipe(t, append([]string{"diff", "--json"}, args...)...)
	var d diffOut
	if err := json.Unmarshal([]byte(stdout), &d); code != exitOK || err != nil {
		t.Fatalf("diff %v: exit %d (%v)\n%s%s", args, code, err, stdout, errs)
	}
	return d
}

// diff shows the parameters that differ and the metrics side by side: two manifests, two
// grid cells, the last recorded run and now.
func TestDiff(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	a := writeManifest(t, dir, tinyManifest)
	if err := os.MkdirAll(filepath.Join(dir, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := writeManifest(t, filepath.Join(dir, "b"), strings.Replace(tinyManifest, "lr: 0.05, eval_every", "lr: 0.5, eval_every", 1))
	runJSON(t, "run", a, "--store", store)
	runJSON(t, "run", b, "--store", store)

	d := diffJSON(t, a, b, "--store", store)
	if len(d.Params) != 1 || d.Params[0] != (compare.Param{Path: "train.lr", A: "0.05", B: "0.5"}) {
		t.Errorf("params: %+v", d.Params)
	}
	if len(d.Runs) != 2 || d.Runs[0].Run != "fedavg seed=0" || d.Runs[0].A["final_pooled_pct"] == nil || d.Runs[0].B["final_pooled_pct"] == nil ||
		*d.Runs[0].A["final_client_mean_pct"] == *d.Runs[0].B["final_client_mean_pct"] {
		t.Errorf("runs: %+v", d.Runs)
	}
	// local has its own lr: the same run on both sides.
	if l := d.Runs[1]; *l.A["final_client_mean_pct"] != *l.B["final_client_mean_pct"] {
		t.Errorf("local differs: %+v", l)
	}

	// Two grid cells of one manifest, paired by seed.
	grid := []string{"-S", "grid.train.lr=[0.05,0.5]"}
	runJSON(t, append([]string{"run", a, "--store", store}, grid...)...)
	d = diffJSON(t, append([]string{a + "#fedavg lr=0.05", a + "#fedavg lr=0.5", "--store", store}, grid...)...)
	if len(d.Params) != 1 || d.Params[0].Path != "train.lr" || len(d.Runs) != 1 || d.Runs[0].Run != "seed=0" || d.Runs[0].StateB != listing.Cached {
		t.Errorf("cells: %+v", d)
	}
	if code, _, errs := fedpipe(t, "diff", a+"#fedavg lr=9", a, "--store", store); code != exitInvalid || !strings.Contains(errs, `no grid cell "fedavg lr=9"`) {
		t.Errorf("unknown cell: exit %d %s", code, errs)
	}

	// The last recorded run and now: the file edited after its run.
	if err := os.WriteFile(b, []byte(strings.Replace(tinyManifest, "lr: 0.05, eval_every", "lr: 0.3, eval_every", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	d = diffJSON(t, b, "--store", store)
	if len(d.Params) != 1 || d.Params[0] != (compare.Param{Path: "train.lr", A: "0.5", B: "0.3"}) || d.Runs[0].StateB != listing.Stale {
		t.Errorf("last run vs now: %+v", d)
	}
	// After running it, the run before is what it is compared with.
	runJSON(t, "run", b, "--store", store)
	d = diffJSON(t, b, "--store", store)
	if len(d.Params) != 1 || d.Params[0] != (compare.Param{Path: "train.lr", A: "0.5", B: "0.3"}) || d.Runs[0].StateB != listing.Cached {
		t.Errorf("previous run vs now: %+v", d)
	}
}
