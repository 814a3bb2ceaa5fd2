package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/table"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/data"
)

// ciStore is the store a test of a CI manifest computes in: $FEDPIPE_CI_STORE where set
// (.ci/run sets it, so that ci/verify.sh then finds the runs computed and only checks
// them: the manifest is trained once per CI run, not twice), else a new one.
func ciStore(t *testing.T) string {
	if s := os.Getenv("FEDPIPE_CI_STORE"); s != "" {
		return s
	}
	return filepath.Join(t.TempDir(), "store")
}

// The CI-sized selection manifest on real FMNIST under Dir(0.1): FedOBP personalizes
// under 0.5% of the parameters yet scores at least as high as FedAvg, and FedSelect's
// paper variant stays within its alpha.
func TestCISelectionManifest(t *testing.T) {
	if testing.Short() {
		t.Skip("trains four CNN runs")
	}
	if _, err := os.Stat(filepath.Join(data.FMNISTSystemDir, "train-images-idx3-ubyte.gz")); err != nil {
		t.Skip("Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)")
	}
	store := ciStore(t)
	res := runJSON(t, "run", "../../manifests/ci-fmnist-select.yaml", "--store", store)
	pooled := map[string]float64{}
	re := regexp.MustCompile(`(?m)^\| ([\w-]+) \| 1 \| 10 \| [0-9.]+ ± [0-9.]+ \| ([0-9.]+) \|`)
	for _, m := range re.FindAllStringSubmatch(res.Report, -1) {
		pooled[m[1]], _ = strconv.ParseFloat(m[2], 64)
	}
	if len(pooled) != 4 {
		t.Fatalf("report rows:\n%s", res.Report)
	}
	t.Logf("final pooled accuracy: %v", pooled)
	// The report names methods by their display names.
	obp, avg := pooled[manifest.DisplayName("fedobp")], pooled[manifest.DisplayName("fedavg")]
	if obp == 0 || avg == 0 || obp < avg {
		t.Errorf("FedOBP %.2f%% below FedAvg %.2f%% (or a row not found)", obp, avg)
	}
	s, err := artifacts.Open(store, artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fraction := func(stage string) float64 {
		for _, st := range res.Stages {
			if st.Name != stage {
				continue
			}
			d, err := artifacts.ParseDigest(st.Outputs["selection"])
			if err != nil {
				t.Fatal(err)
			}
			b, err := s.Get(d)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := table.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			// Largest fraction of all parameters any client personalized in any round.
			type rc struct{ r, c int64 }
			pers, total := map[rc]int64{}, map[rc]int64{}
			for i := range tb.NumRows() {
				k := rc{tb.Col("round").Int64[i], tb.Col("client").Int64[i]}
				pers[k] += tb.Col("personalized").Int64[i]
				total[k] += tb.Col("total").Int64[i]
			}
			worst := 0.0
			for k := range pers {
				worst = max(worst, float64(pers[k])/float64(total[k]))
			}
			return worst
		}
		t.Fatalf("no stage %q", stage)
		return 0
	}
	obp, paper := fraction("train fedobp seed=0"), fraction("train fedselect-paper seed=0")
	t.Logf("largest personalized fraction: fedobp %.4f%%, fedselect-paper %.2f%%", 100*obp, 100*paper)
	if obp <= 0 || obp >= 0.005 {
		t.Errorf("FedOBP personalized %.4f%% of the parameters, want (0, 0.5%%)", 100*obp)
	}
	if paper <= 0 || paper > 0.3 {
		t.Errorf("FedSelect (paper, alpha 0.3) personalized %.2f%%", 100*paper)
	}
}
