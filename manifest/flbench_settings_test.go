package manifest

import (
	"strings"
	"testing"
)

// partition.seed replaces the run's seed for the partition only; unset, the run's seed
// partitions as before.
func TestPartitionSeed(t *testing.T) {
	const src = "name: t\nseeds: [0, 1]\ndataset: {name: fmnist}\npartition: {clients: 4%s}\nmethods: [{name: fedavg}]\n"
	m, err := ParseManifest("m.yaml", []byte(strings.Replace(src, "%s", ", seed: 42", 1)))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := m.Expand()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.PartitionSeed() != 42 {
			t.Errorf("run seed %d: partition seed %d, want partition.seed 42", r.Seed, r.PartitionSeed())
		}
	}
	m, err = ParseManifest("m.yaml", []byte(strings.Replace(src, "%s", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	runs, _ = m.Expand()
	for _, r := range runs {
		if r.PartitionSeed() != r.Seed {
			t.Errorf("without partition.seed: partition seed %d, run seed %d", r.PartitionSeed(), r.Seed)
		}
	}
}

// A negative partition.seed is refused at its line; a grid over it gives each run its own
// value (the runs copy one PartitionSpec, so a value decoded in place through the
// pointer would be shared by all of them).
func TestPartitionSeedCheckedAndGridded(t *testing.T) {
	_, err := ParseManifest("m.yaml", []byte("name: t\ndataset: {name: fmnist}\npartition:\n  clients: 4\n  seed: -1\nmethods: [{name: fedavg}]\n"))
	if err == nil || !strings.Contains(err.Error(), "m.yaml:5") || !strings.Contains(err.Error(), "partition.seed") {
		t.Errorf("negative partition.seed: error %v, want one at m.yaml:5 naming partition.seed", err)
	}
	m, err := ParseManifest("m.yaml", []byte("name: t\ndataset: {name: fmnist}\npartition: {clients: 4, seed: 7}\ngrid: {partition.seed: [1, 2]}\nmethods: [{name: fedavg}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := m.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].PartitionSeed() != 1 || runs[1].PartitionSeed() != 2 || *m.Partition.Seed != 7 {
		t.Errorf("grid over partition.seed [1, 2] from 7: runs %d, seeds %d %d, manifest %d",
			len(runs), runs[0].PartitionSeed(), runs[1].PartitionSeed(), *m.Partition.Seed)
	}
}

// normalize: flbench is accepted where FL-bench has constants and refused, at
// dataset.normalize and naming the dataset, where it has none.
func TestNormalizeFLBenchChecked(t *testing.T) {
	const src = "name: t\ndataset:\n  name: medmnist\n  variant: %s\n  normalize: flbench\nmethods: [{name: fedavg}]\n"
	if _, err := ParseManifest("m.yaml", []byte(strings.Replace(src, "%s", "organamnist", 1))); err != nil {
		t.Errorf("organamnist flbench: %v", err)
	}
	_, err := ParseManifest("m.yaml", []byte(strings.Replace(src, "%s", "organsmnist", 1)))
	if err == nil || !strings.Contains(err.Error(), "m.yaml:5") || !strings.Contains(err.Error(), "medmnist organsmnist") {
		t.Errorf("organsmnist flbench: error %v, want one at m.yaml:5 naming medmnist organsmnist", err)
	}
	for name, ok := range map[string]bool{"fmnist": true, "svhn": true, "cifar10c": false, "officehome": false} {
		ds := DatasetSpec{Name: name}
		if name == "cifar10c" {
			ds.Variant = "fog"
		}
		if _, got := FLBenchDataset(ds); got != ok {
			t.Errorf("FLBenchDataset(%s) = %v, want %v", name, got, ok)
		}
	}
}

// partition.population and shard_take are FedSelect's official data settings: refused,
// naming the field at its line, outside class-pure shards or with fewer users than clients.
func TestPopulationAndShardTakeChecked(t *testing.T) {
	const head = "name: t\ndataset: {name: cifar10}\npartition:\n"
	shards := "  scheme: shards\n  clients: 10\n  shards: 2\n  samples_per_client: 100\n"
	cases := []struct{ body, field, line string }{
		{"  scheme: dirichlet\n  clients: 10\n  population: 100\n", "partition.population", "m.yaml:6"},
		{shards + "  shard_mode: official\n  population: 5\n", "partition.population", "m.yaml:9"},
		{shards + "  population: 100\n", "partition.population", "m.yaml:8"},
		{shards + "  shard_take: official\n", "partition.shard_take", "m.yaml:8"},
		{shards + "  shard_mode: official\n  population: 100\n  shard_take: official\n", "", ""},
	}
	for _, c := range cases {
		src := head + c.body + "methods: [{name: fedavg}]\n"
		m, err := ParseManifest("m.yaml", []byte(src))
		if err == nil {
			_, err = m.Expand()
		}
		if c.field == "" {
			if err != nil {
				t.Errorf("%s: %v", c.body, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), c.line) {
			t.Errorf("%s: error %v, want one at %s naming %s", c.body, err, c.line, c.field)
		}
	}
}

// partition.draw: flbench needs FL-bench's own Dirichlet settings (no balance cap, test
// counts rounded down) and a seed numpy accepts; each refusal names its field and line.
func TestPartitionDrawFLBenchChecked(t *testing.T) {
	const src = "name: t\ndataset: {name: fmnist}\npartition:\n  clients: 4\n  draw: flbench\n%s\nmethods: [{name: fedavg}]\n"
	expand := func(extra string) error {
		m, err := ParseManifest("m.yaml", []byte(strings.Replace(src, "%s", extra, 1)))
		if err != nil {
			return err
		}
		_, err = m.Expand()
		return err
	}
	if err := expand("  balance_cap: false\n  test_rounding: floor\n  seed: 42"); err != nil {
		t.Errorf("FL-bench's settings: %v", err)
	}
	for extra, want := range map[string]string{
		"  test_rounding: floor\n  seed: 42":                               "m.yaml:5",
		"  balance_cap: false\n  seed: 42":                                 "m.yaml:5",
		"  balance_cap: false\n  test_rounding: floor\n  scheme: iid":      "m.yaml:5",
		"  balance_cap: false\n  test_rounding: floor\n  seed: 4294967296": "m.yaml:8",
		"  balance_cap: false\n  test_rounding: floor\n  seed: 4294967295": "",
	} {
		err := expand(extra)
		if want == "" {
			if err != nil {
				t.Errorf("%q: %v", extra, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "draw flbench") {
			t.Errorf("%q: error %v, want one at %s about draw flbench", extra, err, want)
		}
	}
}
