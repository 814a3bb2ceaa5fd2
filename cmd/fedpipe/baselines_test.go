package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/data"
)

// Every method runs on the one loop, on Synthetic and on FMNIST; under Dir(0.1) the
// personalized methods beat FedAvg's global model on each client's own test split.
func TestCIBaselinesManifest(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 40 runs")
	}
	if _, err := os.Stat(filepath.Join(data.FMNISTSystemDir, "train-images-idx3-ubyte.gz")); err != nil {
		t.Skip("Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)")
	}
	res := runJSON(t, "run", "../../manifests/ci-baselines.yaml", "--store", filepath.Join(t.TempDir(), "store"))
	// The final pooled accuracy before fine-tuning, and after it for runs that fine-tune
	// (FedAvg+FT is FedAvg before fine-tuning; its own figure is the one after).
	re := regexp.MustCompile(`(?m)^\| ([\w-]+) dataset=(\w+) \| 1 \| 8 \| [0-9.]+ ± [0-9.]+ \| ([0-9.]+) \| [^|]* \| (?:—|([0-9.]+) / [0-9.]+) \|`)
	pooled := map[string]map[string]float64{"synthetic": {}, "fmnist": {}}
	for _, m := range re.FindAllStringSubmatch(res.Report, -1) {
		v := m[3]
		if m[1] == "fedavg-ft" { // the manifest's own label, printed as written
			v = m[4]
		}
		pooled[m[2]][m[1]], _ = strconv.ParseFloat(v, 64)
	}
	for ds, rows := range pooled {
		if len(rows) != 20 {
			t.Fatalf("%s: %d methods in the report, want 20:\n%s", ds, len(rows), res.Report)
		}
		for _, m := range []string{"local", "fedper", "fedrep", "ditto", "fedselect", "fedavg-ft",
			"lotteryfl", "fedala", "fedpac", "pfedfda", "flute"} {
			// The report names methods by their display names (a label of the manifest's own,
			// fedavg-ft, as written).
			if got, fedavg := rows[manifest.DisplayName(m)], rows[manifest.DisplayName("fedavg")]; got <= fedavg {
				t.Errorf("%s: %s %.2f%% not above FedAvg %.2f%%", ds, m, got, fedavg)
			}
		}
	}
	t.Logf("pooled accuracy: %v", pooled)
}
