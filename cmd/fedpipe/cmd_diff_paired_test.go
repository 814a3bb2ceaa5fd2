package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/results/compare"
	"github.com/fedpipe/fedpipe/stats"
)

// diffPairedJSON is diff --json's "paired" part, decoded loosely (nulls as nil).
type diffPairedJSON struct {
	Config  string
	Seeds   []int64
	Metrics []struct {
		Metric string
		A, B   struct {
			N    int
			Mean *float64
			Std  *float64
			CI   struct{ Lo, Hi *float64 }
		}
		Seeds struct {
			Unit     string
			N        int
			MeanDiff *float64 `json:"mean_diff"`
			CI       struct{ Lo, Hi *float64 }
			P        *float64
			Test     string
		}
	}
	Clients *struct {
		Unit     string
		N        int
		MeanDiff *float64 `json:"mean_diff"`
		P        *float64
		Test     string
	}
}

// diff of two methods' grid cells pairs their runs by seed and their clients within each
// seed: the numbers are the stats package's on the runs' own values, and the text labels
// what is paired over, the interval and the test.
func TestDiffPairedComparison(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, strings.Replace(tinyManifest, "seeds: [0]", "seeds: [0, 1, 2]", 1))
	runJSON(t, "run", m, "--store", store)
	code, out, errs := fedpipe(t, "diff", "--json", m+"#fedavg", m+"#local", "--store", store)
	var d struct {
		Runs   []compare.Run
		Paired []diffPairedJSON
	}
	if err := json.Unmarshal([]byte(out), &d); code != exitOK || err != nil {
		t.Fatalf("exit %d (%v)\n%s%s", code, err, out, errs)
	}
	if len(d.Paired) != 1 || d.Paired[0].Config != "" || len(d.Paired[0].Seeds) != 3 || len(d.Paired[0].Metrics) != len(compare.Metrics) {
		t.Fatalf("paired: %+v", d.Paired)
	}
	var a, b []float64
	for _, r := range d.Runs {
		a, b = append(a, *r.A["final_client_mean_pct"]), append(b, *r.B["final_client_mean_pct"])
	}
	want := stats.Compare(stats.Seeds, a, b)
	got := d.Paired[0].Metrics[0]
	if got.Metric != "final_client_mean_pct" || got.Seeds.N != 3 || got.Seeds.Test != stats.TestSignFlip ||
		math.Abs(*got.Seeds.P-want.P) > 1e-12 || math.Abs(*got.Seeds.MeanDiff-want.Mean) > 1e-9 ||
		math.Abs(*got.Seeds.CI.Lo-want.CI.Lo) > 1e-9 || got.A.N != 3 || math.Abs(*got.A.Std-stats.SampleStd(a)) > 1e-9 {
		t.Errorf("final_client_mean over seeds: %+v, want %+v", got, want)
	}
	// Each run's client mean is the mean over its clients, so the mean per-client difference
	// over all (seed, client) pairs is the mean of the runs' differences (6 clients each).
	c := d.Paired[0].Clients
	if c == nil || c.Unit != "clients" || c.N != 18 || c.Test != stats.TestSignedRank || *c.P < 0 || *c.P > 1 ||
		math.Abs(*c.MeanDiff-want.Mean) > 1e-9 {
		t.Errorf("clients: %+v (want mean %g)", c, want.Mean)
	}
	code, text, _ := fedpipe(t, "diff", m+"#fedavg", m+"#local", "--store", store)
	for _, s := range []string{"paired comparison, B − A", "seeds 0,1,2", "95% CI over seeds", "95% CI of Δ", "exact sign-flip permutation test",
		"final % per client (seeds pooled)", "Wilcoxon signed-rank test (exact)", "uncorrected for the number of comparisons"} {
		if code != exitOK || !strings.Contains(text, s) {
			t.Errorf("text lacks %q:\n%s", s, text)
		}
	}

	// One seed: no interval over seeds (null in JSON, said in text), p = 1.
	code, out, _ = fedpipe(t, "diff", "--json", m+"#fedavg", m+"#local", "--store", store, "--set", "seeds=[0]")
	var one struct{ Paired []diffPairedJSON }
	if err := json.Unmarshal([]byte(out), &one); code != exitOK || err != nil || len(one.Paired) != 1 {
		t.Fatalf("one seed: exit %d %v\n%s", code, err, out)
	}
	if s := one.Paired[0].Metrics[0]; s.Seeds.N != 1 || s.Seeds.CI.Lo != nil || s.A.Std != nil || *s.Seeds.P != 1 {
		t.Errorf("one seed: %+v", s)
	}
	_, text, _ = fedpipe(t, "diff", m+"#fedavg", m+"#local", "--store", store, "--set", "seeds=[0]")
	if !strings.Contains(text, "(n=1, no interval)") {
		t.Errorf("one seed text:\n%s", text)
	}
}
