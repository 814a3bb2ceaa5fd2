package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/fedpipe/fedpipe/stages/data"
)

const fmnistManifest = `name: fmnist-ci
dataset: {name: fmnist, max_samples: 2000}
partition: {scheme: dirichlet, clients: 5, alpha: 0.1, min_samples: 20}
model: {arch: cnn4}
train: {rounds: 3, local_epochs: 1, batch_size: 32, lr: 0.01, momentum: 0.7, eval_every: 0, checkpoint_every: 1}
methods:
  - name: fedavg
  - name: local
`

var rowRE = regexp.MustCompile(`(?m)^\| (\w+) \| 1 \| 5 \| ([0-9.]+) ± [0-9.]+ \| ([0-9.]+) \|`)

// On real Fashion-MNIST under Dir(0.1), Local beats FedAvg's global model evaluated on each
// client's own test split (the published pattern), and a second store gets the same bits.
func TestFashionMNISTLocalBeatsFedAvgAndIsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a CNN for about a minute")
	}
	if _, err := os.Stat(filepath.Join(data.FMNISTSystemDir, "train-images-idx3-ubyte.gz")); err != nil {
		t.Skip("Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)")
	}
	dir := t.TempDir()
	m := writeManifest(t, dir, fmnistManifest)
	a := runJSON(t, "run", m, "--store", filepath.Join(dir, "a"))
	acc := map[string]float64{}
	for _, row := range rowRE.FindAllStringSubmatch(a.Report, -1) {
		acc[row[1]], _ = strconv.ParseFloat(row[2], 64)
	}
	if len(acc) != 2 {
		t.Fatalf("report rows not found:\n%s", a.Report)
	}
	// The report names methods by their display names.
	t.Logf("client-mean test accuracy: fedavg %.2f%%, local %.2f%%", acc["FedAvg"], acc["Local"])
	if acc["Local"] < acc["FedAvg"]+15 {
		t.Errorf("Local %.2f%% is not well above FedAvg %.2f%% under Dir(0.1)", acc["Local"], acc["FedAvg"])
	}
	b := runJSON(t, "run", m, "--store", filepath.Join(dir, "b"))
	for i, s := range a.Stages {
		for name, d := range s.Outputs {
			if b.Stages[i].Outputs[name] != d {
				t.Errorf("%s output %s differs across stores", s.Name, name)
			}
		}
	}
}
