package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts/table"
)

type verifyCell struct {
	Method   string  `json:"method"`
	Measured float64 `json:"measured"`
	Verdict  string  `json:"verdict"`
	Shift    string  `json:"shift"`
	Level    float64 `json:"level"`
}

func verifyJSON(t *testing.T, args ...string) []verifyCell {
	t.Helper()
	code, out, errs := fedpipe(t, append(args, "--json")...)
	if code != 0 && code != 3 {
		t.Fatalf("verify: exit %d\n%s%s", code, out, errs)
	}
	var res struct {
		Cells []verifyCell `json:"cells"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	return res.Cells
}

// An expectation with shift/level reads the shift stage's summary: degree 0 equals the
// unshifted figure, a recorded degree-1 figure passes, a wrong one fails, and a level the
// shift block lacks is invalid input naming the field.
func TestVerifyUnderShift(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	base := tinyManifest + "shift: {degrees: [0, 1], label_alpha: [0.5]}\nexpect:\n"
	m := writeManifest(t, dir, base+
		"  - {method: local, metric: final_client_mean, published: 0, tolerance: 1000}\n"+
		"  - {method: local, metric: final_client_mean, shift: degree, level: 0, published: 0, tolerance: 1000}\n"+
		"  - {method: local, metric: final_client_mean, shift: degree, level: 1, published: 0, tolerance: 1000}\n"+
		"  - {method: local, metric: final_client_mean, shift: label, level: 0.5, published: 0, tolerance: 1000}\n")
	cells := verifyJSON(t, "verify", m, "--store", store, "--run")
	if len(cells) != 4 {
		t.Fatalf("%d cells, want 4: %+v", len(cells), cells)
	}
	for _, c := range cells {
		if c.Verdict != "pass" {
			t.Fatalf("cell %+v did not pass", c)
		}
	}
	if cells[0].Measured != cells[1].Measured {
		t.Errorf("degree 0 measured %v, unshifted %v", cells[1].Measured, cells[0].Measured)
	}
	if cells[1].Measured == cells[2].Measured || cells[2].Shift != "degree" || cells[2].Level != 1 || cells[3].Shift != "label" {
		t.Errorf("degree 1 cell %+v looks like degree 0's", cells[2])
	}
	d1 := cells[2].Measured
	for _, c := range []struct {
		published float64
		want      int
	}{{d1, 0}, {d1 + 5, 3}} {
		writeManifest(t, dir, base+fmt.Sprintf("  - {method: local, metric: final_client_mean, shift: degree, level: 1, published: %.6f, tolerance: 0.01}\n", c.published))
		if code, out, _ := fedpipe(t, "verify", m, "--store", store); code != c.want {
			t.Errorf("published %.4f (measured %.4f): exit %d, want %d\n%s", c.published, d1, code, c.want, out)
		}
	}
	writeManifest(t, dir, base+"  - {method: local, metric: final_client_mean, shift: degree, level: 0.7, published: 50}\n")
	if code, _, errs := fedpipe(t, "verify", m, "--store", store); code != 2 || !strings.Contains(errs, "expect[0].level") || !strings.Contains(errs, "shift.degrees") {
		t.Errorf("level outside the shift block: exit %d\n%s", code, errs)
	}
}

// DM-PFL+ infers per sample with two models in the evaluate and the shift stage alike:
// degree 0 reproduces the evaluate summary; the report carries the cost and label tables.
func TestDMPFLPlusEvaluatesAlikeInBothStages(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	body := strings.Replace(tinyManifest, "  - name: local\n    train: {lr: 0.05}\n",
		"  - name: dmpfl_plus\n    params: {readjust_every: 2, alpha_s: 0.1}\n  - name: feddst\n    params: {readjust_every: 2}\n", 1)
	m := writeManifest(t, dir, body+"shift: {degrees: [0, 1], label_alpha: [1]}\n")
	res := runJSON(t, "run", m, "--store", store)
	for _, want := range []string{"Cost per client", "label shift", "| DM-PFL+ |", "| FedDST |"} {
		if !strings.Contains(res.Report, want) {
			t.Errorf("report lacks %q:\n%s", want, res.Report)
		}
	}
	out := filepath.Join(dir, "out")
	if code, _, errs := fedpipe(t, "export", m, "--store", store, "-o", out, "--format", "arrow"); code != 0 {
		t.Fatal(errs)
	}
	ev, err := table.ReadFile(filepath.Join(out, "evaluate_dmpfl_plus_seed-0", "summary.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := table.ReadFile(filepath.Join(out, "shift_dmpfl_plus_seed-0", "summary.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := ev.Col("accuracy_client_mean").Float64[0], sh.Col("accuracy_client_mean").Float64[0]; a != b {
		t.Errorf("dmpfl_plus: evaluate %v, shift degree 0 %v", a, b)
	}
	// Sparse training halves the traffic and cuts the FLOPs: FedAvg's cost is above FedDST's.
	writeManifest(t, dir, body+"shift: {degrees: [0, 1], label_alpha: [1]}\nexpect:\n"+
		"  - {method: fedavg, metric: comm_mb, above: feddst, tolerance: 0}\n"+
		"  - {method: fedavg, metric: flops_1e12, above: feddst, tolerance: 0}\n"+
		"  - {method: feddst, metric: mb_up, above: fedavg, tolerance: 0}\n")
	cells := verifyJSON(t, "verify", m, "--store", store)
	if len(cells) != 3 || cells[0].Verdict != "pass" || cells[1].Verdict != "pass" || cells[2].Verdict != "fail" {
		t.Errorf("cost claims: %+v", cells)
	}
	cost, err := table.ReadFile(filepath.Join(out, "train_dmpfl_plus_seed-0", "cost.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	if cost.NumRows() != 6 || cost.Col("flops").Float64[0] <= 0 {
		t.Errorf("cost table: %d rows, flops %v", cost.NumRows(), cost.Col("flops").Float64)
	}
}
