package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/results/listing"
	"github.com/fedpipe/fedpipe/stats"
)

// ls (table, CSV, JSON) and export's summary table carry each run's test-set intervals:
// Wilson over the pooled test samples around the pooled accuracy, the bootstrap over clients
// around the client mean, labelled as such.
func TestTestSetIntervalsInLsAndExport(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, tinyManifest)
	runJSON(t, "run", m, "--store", store)
	if code, _, errs := fedpipe(t, "export", m, "--store", store, "-o", filepath.Join(dir, "ex"), "--format", "csv"); code != exitOK {
		t.Fatalf("export: %d %s", code, errs)
	}
	summary := readCSV(t, filepath.Join(dir, "ex", "evaluate_fedavg_seed-0", "summary.csv"))
	samples, _ := strconv.Atoi(summary["test_samples"])
	pooled, _ := strconv.ParseFloat(summary["accuracy_pooled"], 64)
	mean, _ := strconv.ParseFloat(summary["accuracy_client_mean"], 64)
	w := stats.PooledInterval(pooled, samples)
	lo, _ := strconv.ParseFloat(summary["final_pooled_test_set_ci95_lo_pct"], 64)
	hi, _ := strconv.ParseFloat(summary["final_pooled_test_set_ci95_hi_pct"], 64)
	if samples == 0 || math.Abs(lo-100*w.Lo) > 1e-9 || math.Abs(hi-100*w.Hi) > 1e-9 {
		t.Errorf("export: pooled %g of %d, interval [%g, %g], want %v", pooled, samples, lo, hi, w)
	}
	blo, _ := strconv.ParseFloat(summary["final_client_mean_bootstrap_ci95_lo_pct"], 64)
	bhi, _ := strconv.ParseFloat(summary["final_client_mean_bootstrap_ci95_hi_pct"], 64)
	if !(blo <= 100*mean && 100*mean <= bhi) {
		t.Errorf("export: client mean %g outside its bootstrap interval [%g, %g]", 100*mean, blo, bhi)
	}

	_, out, _ := fedpipe(t, "ls", m, "--store", store, "--json")
	var ls struct{ Runs []listing.Row }
	if err := json.Unmarshal([]byte(out), &ls); err != nil || len(ls.Runs) != 2 {
		t.Fatalf("ls --json: %v\n%s", err, out)
	}
	if iv := ls.Runs[0].Intervals; iv.Pooled == nil || math.Abs(iv.Pooled.Lo-lo) > 1e-9 || iv.ClientMean == nil || math.Abs(iv.ClientMean.Hi-bhi) > 1e-9 {
		t.Errorf("ls --json intervals: %+v", iv)
	}
	_, out, _ = fedpipe(t, "ls", m, "--store", store, "--csv")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 3 || !strings.HasSuffix(strings.Join(rows[0], ","), strings.Join(listing.IntervalHeader, ",")) ||
		rows[1][len(rows[1])-4] != strconv.FormatFloat(lo, 'f', 2, 64) {
		t.Errorf("ls --csv: %v\n%s", err, out)
	}
	_, out, _ = fedpipe(t, "ls", m, "--store", store)
	if !strings.Contains(out, "pooled 95% (test set)") || !strings.Contains(out, "final 95% (bootstrap over clients)") ||
		!strings.Contains(out, "["+strconv.FormatFloat(lo, 'f', 2, 64)+", ") {
		t.Errorf("ls table:\n%s", out)
	}
}

// readCSV reads a one-row CSV file as column → value.
func readCSV(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("%s: %v (%d rows)", path, err, len(rows))
	}
	out := map[string]string{}
	for i, h := range rows[0] {
		out[h] = rows[1][i]
	}
	return out
}
