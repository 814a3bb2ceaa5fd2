package manifest

import (
	"strings"
	"testing"
	"time"
)

func gridOf(n int, scale float64) string {
	v := make([]string, n)
	for i := range v {
		v[i] = FormatFloat(scale * float64(i+1))
	}
	return "[" + strings.Join(v, ", ") + "]"
}

// A million-cell grid is counted, not expanded: refused at once, with the count and the
// limit, at the grid's line.
func TestMillionCellsRefusedFast(t *testing.T) {
	src := "name: t\ndataset: {name: synthetic}\npartition: {scheme: natural}\nmethods: [{name: fedavg}]\ngrid:\n  train.lr: " +
		gridOf(1000, 0.001) + "\n  train.weight_decay: " + gridOf(1000, 0.0001) + "\n"
	start := time.Now()
	_, err := ParseManifest("m.yaml", []byte(src))
	if took := time.Since(start); took > time.Second {
		t.Errorf("took %v", took)
	}
	if err == nil || !strings.Contains(err.Error(), "m.yaml:") || !strings.Contains(err.Error(), "1,000,000 cells") || !strings.Contains(err.Error(), "--max-cells 10000") {
		t.Fatalf("got %v", err)
	}
	lim := DefaultLimits
	lim.MaxCells = 2000000
	lim.MaxRounds = 10
	// Raised limits let it through the count; the per-run checks still apply (rounds 20 > 10).
	_, err = ParseManifestOptions("m.yaml", []byte(src+"train: {rounds: 20}\n"), Options{Limits: lim})
	if err == nil || !strings.Contains(err.Error(), "train.rounds: 20 rounds exceed the limit of 10") {
		t.Fatalf("got %v", err)
	}
}

func TestCountCellsMatchesExpand(t *testing.T) {
	src := `name: t
seeds: [0, 1, 2]
dataset: {name: synthetic}
partition: {scheme: natural}
grid: {train.lr: [0.1, 0.2]}
methods:
  - {name: fedavg}
  - {name: fedprox, grid: {params.mu: [0.1, 0.01, 0.001]}}
`
	m, err := ParseManifest("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	n, err := m.CountCells()
	if err != nil {
		t.Fatal(err)
	}
	runs, err := m.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(runs)) || n != 3*2+3*2*3 {
		t.Errorf("counted %d, expanded %d", n, len(runs))
	}
}

// Every bound names file:line, the field, the value and the limit; none of these inputs is
// expanded into memory.
func TestBounds(t *testing.T) {
	const head = "name: t\nmethods: [{name: fedavg}]\n"
	syn := "dataset: {name: synthetic}\npartition: {scheme: natural}\n"
	fm := "dataset: {name: fmnist}\n"
	for _, c := range []struct{ src, want string }{
		{syn + "train: {rounds: 9223372036854775807}\n", "m.yaml:5:17: train.rounds: 9223372036854775807 rounds exceed the limit of 100000"},
		{syn + "train: {batch_size: 100000000}\n", "m.yaml:5:21: train.batch_size: 100000000 exceeds the limit of 1048576"},
		{fm + "train: {batch_size: 100000}\n", "m.yaml:4:21: train.batch_size: 100000 exceeds the 70000 samples of fmnist"},
		{"dataset: {name: synthetic, devices: 2000000000}\npartition: {scheme: natural}\n", "m.yaml:3:37: dataset.devices: 2000000000 devices exceed the limit of 100000"},
		{syn + "model: {hidden: [4000000000]}\n", "m.yaml:5:17: model.hidden: width 4000000000 (hidden[0]) exceeds the limit of 1048576"},
		{syn + "model: {hidden: [1000000, 1000000]}\n", "m.yaml:5:17: model.hidden: fedavg seed=0 needs an estimated"},
		{syn + "seeds: [0, 0]\n", "m.yaml:5:8: seeds: seed 0 listed twice"},
		{syn + "seeds: " + gridOf(1001, 1) + "\n", "seeds: 1001 seeds exceed the limit of 1000"},
		{"dataset: {name: synthetic}\npartition: {scheme: natural, test_fraction: 0}\n", "partition.test_fraction: 0 leaves no test data"},
		{syn + "grid: {partition.test_fraction: [0.2, 0]}\n", "m.yaml:5:8: grid.partition.test_fraction: 0 leaves no test data"},
		{syn + "grid: {train.rounds: [5, 500000]}\n", "m.yaml:5:8: grid.train.rounds: 500000 rounds exceed"},
		{fm + "partition: {clients: 200000}\n", "partition.clients: 200000 clients"},
		{syn + "train: {local_epochs: 1000000}\n", "train.local_epochs: 1000000 local epochs exceed the limit of 10000"},
		{syn + "description: \"a\\x00b\"\n", "description: holds the control character"},
		{syn + "grid: {params.mu: [0.1]}\n", "grid.params.mu"},
	} {
		lim := DefaultLimits
		lim.MemoryBytes = 64 << 30
		_, err := ParseManifestOptions("m.yaml", []byte(head+c.src), Options{Limits: lim})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
}
