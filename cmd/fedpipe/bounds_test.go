package main

import (
	"strings"
	"testing"
)

// Two method labels with identical settings are two runs sharing one cached stage: both
// are in the report and both expectations are verified.
func TestIdenticalLabelsAreTwoRuns(t *testing.T) {
	dir := t.TempDir()
	m := writeManifest(t, dir, `name: dup
dataset: {name: synthetic, devices: 6}
partition: {scheme: natural}
model: {arch: logreg}
train: {rounds: 1}
methods:
  - {name: x, method: fedavg}
  - {name: y, method: fedavg}
expect:
  - {method: x, metric: final_pooled, published: 50, tolerance: 100}
  - {method: y, metric: final_pooled, published: 50, tolerance: 100}
`)
	store := dir + "/store"
	res := runJSON(t, "run", m, "--store", store)
	if !strings.Contains(res.Report, "| x |") || !strings.Contains(res.Report, "| y |") {
		t.Errorf("report lacks a label:\n%s", res.Report)
	}
	trains := 0
	for _, s := range res.Stages {
		if strings.HasPrefix(s.Name, "train ") {
			trains++
		}
	}
	if trains != 1 {
		t.Errorf("%d train stages, want 1 shared", trains)
	}
	code, out, errs := fedpipe(t, "verify", m, "--store", store)
	if code != 0 || !strings.Contains(out, "2 passed, 0 failed, 0 not computed") {
		t.Errorf("verify: exit %d\n%s%s", code, out, errs)
	}
}
