package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTinyCIFAR10 writes a CIFAR-10 binary folder of 6 files × 20 records, labels i mod 10,
// pixels from a fixed generator.
func writeTinyCIFAR10(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	state := uint32(1)
	for _, name := range []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"} {
		var b []byte
		for i := 0; i < 20; i++ {
			b = append(b, byte(i%10))
			for p := 0; p < 3072; p++ {
				state = state*1664525 + 1013904223
				b = append(b, byte(state>>24))
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A CIFAR-10 folder found through --data's subfolder runs end to end with the
// pathological partition and a corruption shift; editing a data file reruns the partition.
func TestCIFAR10PathologicalRun(t *testing.T) {
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	writeTinyCIFAR10(t, filepath.Join(data, "cifar-10-batches-bin"))
	m := filepath.Join(tmp, "m.yaml")
	os.WriteFile(m, []byte(`name: tiny-cifar
dataset: {name: cifar10}
partition: {scheme: pathological, clients: 4, classes_per_client: 2, quantity_skew: 0.5}
train: {rounds: 1, batch_size: 16}
methods: [{name: fedavg}]
shift: {corruptions: [fog], severities: [2]}
`), 0o644)
	store := filepath.Join(tmp, "store")
	first := runJSON(t, "run", m, "--store", store, "--data", data, "--quiet")
	if !strings.Contains(first.Report, "| FedAvg | 1 | 4 |") || !strings.Contains(first.Report, "fog") {
		t.Fatalf("report:\n%s", first.Report)
	}
	f := filepath.Join(data, "cifar-10-batches-bin", "test_batch.bin")
	b, _ := os.ReadFile(f)
	b[1] ^= 0xff
	os.WriteFile(f, b, 0o644)
	second := runJSON(t, "run", m, "--store", store, "--data", data, "--quiet")
	if s := states(second)["partition seed=0"]; s != "ran" {
		t.Errorf("partition %s after a data file changed, want ran", s)
	}
}
