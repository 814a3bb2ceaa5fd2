package manifest

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The FedOBP manifests expect FL-bench's before-fine-tuning best pooled accuracy (the
// figure FedOBP's tables print) and say so, and run FL-bench's baselines (impl: flbench):
// FedRep trains the head E − 1 = 4 epochs of the 5 and the body 1 (train_body_epochs),
// then fine-tunes the head alone for FL-bench's 5 epochs (head_epochs). All but the
// MedMNIST ones deal FL-bench's own partition (partition.draw: flbench); FL-bench reads
// MedMNIST from a re-packed archive (data/download/medmnistA.sh) whose order is unknown.
func TestFedOBPManifestsExpectBeforeFinetuning(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "manifests", "fedobp-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no FedOBP manifests: %v", err)
	}
	for _, f := range files {
		m, err := LoadManifest(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range m.Expect {
			if e.Published != 0 && (e.Metric != "best_pooled" || !strings.Contains(e.Note, "before fine-tuning")) {
				t.Errorf("%s: expect[%d] %s %q: want best_pooled, noted as before fine-tuning", f, i, e.Metric, e.Note)
			}
		}
		runs, err := m.Expand()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			// FL-bench's partition, sample for sample (checked against numpy on FMNIST:
			// stages/partition TestDirichletFLBenchFashionMNIST), wherever fedpipe pools the
			// dataset's official files in FL-bench's order.
			medmnist := strings.HasPrefix(r.Dataset.Name, "medmnist")
			if want := map[bool]string{false: "flbench", true: ""}[medmnist]; r.Partition.Draw != want {
				t.Errorf("%s: %s partition drawn by %q, want %q", f, r.Dataset.Name, r.Partition.Draw, want)
			}
			if r.Method == "fedrep" && (r.Options["impl"] != "flbench" || r.Train.LocalEpochs != 5 ||
				r.Params["train_body_epochs"] != 1 || r.Params["head_epochs"] != 5) {
				t.Errorf("%s: FedRep impl %q, %d local epochs, %v of body, %v of head fine-tuning; want flbench, 5, 1, 5",
					f, r.Options["impl"], r.Train.LocalEpochs, r.Params["train_body_epochs"], r.Params["head_epochs"])
			}
			switch r.Method {
			case "fedper", "apfl", "lgfedavg", "pfedfda", "flute", "feddpa", "floco", "fedala":
				if r.Options["impl"] != "flbench" {
					t.Errorf("%s: %s runs impl %q, want flbench (what FedOBP's tables ran)", f, r.MethodName, r.Options["impl"])
				}
			}
		}
	}
}

// fidelity-fmnist-r100 is Table 6's FMNIST Dir(0.1) setting cut to 100 rounds: one seed,
// one evaluation at round 100 before and after fine-tuning, every Table 6 method.
func TestFidelityFMNISTR100(t *testing.T) {
	full, err := LoadManifest(filepath.Join("..", "manifests", "fedobp-table6-fmnist-dir01.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cut, err := LoadManifest(filepath.Join("..", "manifests", "fidelity-fmnist-r100.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fullRuns, err := full.Expand()
	if err != nil {
		t.Fatal(err)
	}
	cutRuns, err := cut.Expand()
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, r := range fullRuns {
		if r.Seed == 0 {
			want = append(want, r.MethodName)
		}
	}
	for _, r := range cutRuns {
		got = append(got, r.MethodName)
		if r.Train.Rounds != 100 || r.Train.EvalEvery != 100 || r.Train.FinetuneEpochs != 5 || r.Seed != 0 {
			t.Errorf("%s: rounds %d, eval_every %d, finetune %d, seed %d", r.MethodName, r.Train.Rounds, r.Train.EvalEvery, r.Train.FinetuneEpochs, r.Seed)
		}
		if !reflect.DeepEqual(r.Partition, fullRuns[0].Partition) || r.Dataset.Name != "fmnist" {
			t.Errorf("%s: partition %+v, want Table 6's %+v", r.MethodName, r.Partition, fullRuns[0].Partition)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("methods %v, want Table 6's %v", got, want)
	}
}
