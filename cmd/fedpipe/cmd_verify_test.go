package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/table"
)

func TestVerify(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest+"expect:\n  - {method: local, metric: final_pooled, above: fedavg, tolerance: 1}\n")
	// No store: exit 2 (issue 46). An empty one: every cell is listed as not computed, exit 3.
	if code, _, errs := fedpipe(t, "verify", m, "--store", store); code != exitInvalid || !strings.Contains(errs, "no fedpipe store found") {
		t.Fatalf("without a store: exit %d, %q", code, errs)
	}
	emptyStore(t, store)
	code, out, _ := fedpipe(t, "verify", m, "--store", store)
	if code != 3 || !strings.Contains(out, "not computed") {
		t.Fatalf("before running: exit %d\n%s", code, out)
	}
	// --run computes, then the claim holds.
	code, out, errs := fedpipe(t, "verify", m, "--store", store, "--run", "--json")
	if code != 0 {
		t.Fatalf("verify --run: exit %d\n%s%s", code, out, errs)
	}
	var res struct {
		Cells []struct {
			Method   string  `json:"method"`
			Measured float64 `json:"measured"`
			Verdict  string  `json:"verdict"`
		} `json:"cells"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Cells) != 1 || res.Cells[0].Verdict != "pass" {
		t.Fatalf("cells %+v (%v)\n%s", res.Cells, err, out)
	}
	local := res.Cells[0].Measured
	// Record the measured number as a published one: passes; change it by hand: exit 3.
	for _, c := range []struct {
		published float64
		want      int
	}{{local, 0}, {local + 5, 3}} {
		writeManifest(t, dir, tinyManifest+fmt.Sprintf("expect:\n  - {method: local, metric: final_pooled, published: %.4f, tolerance: 0.01}\n", c.published))
		code, out, _ = fedpipe(t, "verify", m, "--store", store)
		if code != c.want {
			t.Errorf("published %.4f (measured %.4f): exit %d, want %d\n%s", c.published, local, code, c.want, out)
		}
	}
	// The reverse claim fails.
	writeManifest(t, dir, tinyManifest+"expect:\n  - {method: fedavg, metric: final_pooled, above: local}\n")
	if code, out, _ = fedpipe(t, "verify", m, "--store", store); code != 3 || !strings.Contains(out, "| fail |") {
		t.Errorf("false claim: exit %d\n%s", code, out)
	}
}

// Shift degree 0 reproduces the unshifted evaluation exactly; the report shows the table.
func TestShiftDegreeZeroIsUnshifted(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest+"shift: {degrees: [0, 0.5, 1]}\n")
	res := runJSON(t, "run", m, "--store", store)
	if !strings.Contains(res.Report, "Accuracy under shift degree d") || !strings.Contains(res.Report, "d = 0.5") {
		t.Fatalf("report lacks the shift table:\n%s", res.Report)
	}
	if strings.Contains(res.Report, "|  |") {
		t.Errorf("report has an empty row:\n%s", res.Report)
	}
	out := filepath.Join(dir, "out")
	if code, _, errs := fedpipe(t, "export", m, "--store", store, "-o", out, "--format", "arrow"); code != 0 {
		t.Fatal(errs)
	}
	for _, method := range []string{"fedavg", "local"} {
		ev, err := table.ReadFile(filepath.Join(out, "evaluate_"+method+"_seed-0", "summary.arrow"))
		if err != nil {
			t.Fatal(err)
		}
		sh, err := table.ReadFile(filepath.Join(out, "shift_"+method+"_seed-0", "summary.arrow"))
		if err != nil {
			t.Fatal(err)
		}
		if sh.Col("shift").String[0] != "degree" || sh.Col("level").Float64[0] != 0 {
			t.Fatalf("first shift row is %s %v", sh.Col("shift").String[0], sh.Col("level").Float64[0])
		}
		for _, col := range []string{"accuracy_client_mean", "accuracy_client_std", "accuracy_pooled"} {
			if a, b := ev.Col(col).Float64[0], sh.Col(col).Float64[0]; a != b {
				t.Errorf("%s %s: unshifted %v, degree 0 %v", method, col, a, b)
			}
		}
	}
}
