package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/results/listing"
)

// ls --evals: one row per evaluation round of each cached run. The rounds are the
// evaluation rounds (every eval_every and the last); the last one's figures are the run's
// final ones and the best pooled is their maximum; runs that fine-tune have after-fine-
// tuning figures, others none; CSV and text carry the same rows.
func TestLsEvals(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	m := writeManifest(t, dir, strings.Replace(tinyManifest, "  - name: local\n    train: {lr: 0.05}\n",
		"  - name: local\n    train: {lr: 0.05, finetune_epochs: 1}\n", 1))
	runJSON(t, "run", m, "--store", store)
	code, out, errs := fedpipe(t, "ls", m, "--store", store, "--evals", "--json")
	if code != exitOK {
		t.Fatalf("ls --evals --json: exit %d\n%s", code, errs)
	}
	var got struct {
		Runs []listing.Row `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Runs) != 2 {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, r := range got.Runs {
		if len(r.Evals) != 2 || r.Evals[0].Round != 2 || r.Evals[1].Round != 4 {
			t.Fatalf("%s: evals %+v, want rounds 2 and 4", r.Label, r.Evals)
		}
		last := r.Evals[1]
		best := math.Max(r.Evals[0].Pooled, last.Pooled)
		if math.Abs(last.Pooled-*r.FinalPooled) > 1e-9 || math.Abs(last.Mean-*r.FinalMean) > 1e-9 || math.Abs(best-*r.BestPooled) > 1e-9 {
			t.Errorf("%s: last evaluation %+v, best pooled %v; the run's final %v / %v, best %v", r.Label, last, best,
				*r.FinalPooled, *r.FinalMean, *r.BestPooled)
		}
		if tunes := r.Method == "local"; (last.PooledFT != nil) != tunes || (last.MeanFT != nil) != tunes {
			t.Errorf("%s: after-fine-tuning figures %v %v", r.Label, last.PooledFT, last.MeanFT)
		}
	}
	_, out, _ = fedpipe(t, "ls", m, "--store", store, "--evals", "--csv")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 5 || recs[0][2] != "pooled_pct" {
		t.Fatalf("csv (%v):\n%s", err, out)
	}
	_, out, _ = fedpipe(t, "ls", m, "--store", store, "--evals")
	if !strings.Contains(out, "4 evaluations of 2 cached runs") || strings.Count(out, "seed=0") != 4 {
		t.Errorf("table:\n%s", out)
	}
}
