package partition

import (
	"fmt"
	"sort"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages/data"
)

// Assignment is a partition's result: each client's train and test samples, as sorted
// indices into the pooled dataset.
type Assignment struct {
	Train, Test [][]int
}

// Clients is the number of clients.
func (a *Assignment) Clients() int { return len(a.Train) }

// Make partitions ds as the run's dataset and partition specs say, with the run's seed.
func Make(ds *data.Dataset, spec manifest.DatasetSpec, p manifest.PartitionSpec, seed int64) (*Assignment, error) {
	// dataset.fraction first, then max_samples of what it kept.
	pool := Fraction(ds.Len(), spec.Fraction, seed)
	if spec.MaxSamples > 0 && spec.MaxSamples < len(pool) {
		keep := Subset(len(pool), spec.MaxSamples, seed)
		for i, k := range keep {
			keep[i] = pool[k]
		}
		pool = keep
	}
	if p.Scheme == "shards" && p.Population > p.Clients {
		// Partition among the whole population, then keep the drawn users as the clients.
		all := p
		all.Clients, all.Population = p.Population, 0
		a, err := Make(ds, spec, all, seed)
		if err != nil {
			return nil, err
		}
		return a.pick(subset(p.Population, p.Clients, seed, "partition/population")), nil
	}
	if p.Scheme == "shards" && p.TestSource == "official" {
		return classShardsOfficial(ds, pool, p, seed)
	}
	labels := make([]int32, len(pool))
	for i, s := range pool {
		labels[i] = ds.Y[s]
	}
	if p.Scheme == "dirichlet" && p.Draw == "flbench" {
		train, test, err := DirichletFLBench(labels, ds.Classes, p.Clients, p.Alpha, p.MinSamples, p.TestFraction, seed)
		if err != nil {
			return nil, err
		}
		for _, split := range [][][]int{train, test} {
			for _, part := range split {
				for i := range part {
					part[i] = pool[part[i]]
				}
			}
		}
		return &Assignment{Train: train, Test: test}, nil
	}
	var parts [][]int
	var err error
	switch p.Scheme {
	case "dirichlet":
		if p.BalanceCap == "false" {
			parts, err = DirichletUncapped(labels, ds.Classes, p.Clients, p.Alpha, p.MinSamples, seed)
		} else {
			parts, err = Dirichlet(labels, ds.Classes, p.Clients, p.Alpha, p.MinSamples, seed)
		}
	case "shards":
		if p.ShardMode == "class_pure" || p.ShardMode == "official" {
			parts, _, err = classShards(labels, ds.Classes, p, seed)
		} else {
			parts, err = Shards(labels, p.Clients, p.Shards, p.SamplesPerClient, seed)
		}
	case "iid":
		parts = IID(len(pool), p.Clients, seed)
	case "pathological":
		if p.ClassDraw == "random" || p.QuantityDraw == "uniform" {
			parts, err = PathologicalRandom(labels, ds.Classes, p.Clients, p.ClassesPerClient, p.QuantitySkew, p.ClassDraw == "random", p.QuantityDraw == "uniform", seed)
		} else {
			parts, err = Pathological(labels, ds.Classes, p.Clients, p.ClassesPerClient, p.QuantitySkew, seed)
		}
	case "natural":
		if ds.Groups == nil {
			return nil, fmt.Errorf("dataset %s has no natural clients", ds.Name)
		}
		parts, err = Natural(gather(ds.Groups, pool), p.Clients, p.MinSamples, seed)
	case "domain":
		if ds.Domains == nil {
			return nil, fmt.Errorf("dataset %s has no domains", ds.Name)
		}
		parts, err = Domain(gather(ds.Domains, pool), p.Clients)
	default:
		err = fmt.Errorf("unknown partition scheme %q", p.Scheme)
	}
	if err != nil {
		return nil, err
	}
	a := &Assignment{Train: make([][]int, len(parts)), Test: make([][]int, len(parts))}
	for c, part := range parts {
		if len(part) < 2 {
			return nil, fmt.Errorf("client %d received %d samples; every client needs at least 2 (one to train, one to test): use fewer clients", c, len(part))
		}
		for i := range part {
			part[i] = pool[part[i]]
		}
		a.Train[c], a.Test[c] = SplitRounded(part, p.TestFraction, p.TestRounding == "floor", seed, c)
	}
	return a, nil
}

// classShardsOfficial deals class-pure shards of the pool's official training samples and
// draws each client's test set from the pool's official test samples of the same classes
// (partition.test_source: official; FedSelect's official code).
func classShardsOfficial(ds *data.Dataset, pool []int, p manifest.PartitionSpec, seed int64) (*Assignment, error) {
	if ds.TestStart <= 0 {
		return nil, fmt.Errorf("partition.test_source official needs a dataset with an official test split; %s records none", ds.Name)
	}
	if p.ShardMode != "class_pure" && p.ShardMode != "official" {
		return nil, fmt.Errorf("partition.test_source official needs shard_mode class_pure or official, got %q", p.ShardMode)
	}
	var trainPool, testPool []int
	for _, s := range pool {
		if s < ds.TestStart {
			trainPool = append(trainPool, s)
		} else {
			testPool = append(testPool, s)
		}
	}
	trainY, testY := make([]int32, len(trainPool)), make([]int32, len(testPool))
	for i, s := range trainPool {
		trainY[i] = ds.Y[s]
	}
	for i, s := range testPool {
		testY[i] = ds.Y[s]
	}
	parts, draw, err := classShards(trainY, ds.Classes, p, seed)
	if err != nil {
		return nil, err
	}
	tests, err := ClassTest(testY, ds.Classes, draw, shardTake(p, p.TestPerClient))
	if err != nil {
		return nil, err
	}
	cutOfficial(tests, p, p.TestPerClient)
	a := &Assignment{Train: make([][]int, len(parts)), Test: make([][]int, len(parts))}
	for c := range parts {
		for i := range parts[c] {
			parts[c][i] = trainPool[parts[c][i]]
		}
		for i := range tests[c] {
			tests[c][i] = testPool[tests[c][i]]
		}
		sort.Ints(parts[c])
		sort.Ints(tests[c])
		a.Train[c], a.Test[c] = parts[c], tests[c]
	}
	return a, nil
}

// classShards deals class-pure shards (shard_mode class_pure or official) of labels and
// returns each client's samples and shard labels; with shard_take official each client's
// samples are its whole shards cut by OfficialCut.
func classShards(labels []int32, classes int, p manifest.PartitionSpec, seed int64) ([][]int, [][]int32, error) {
	parts, draw, err := ClassShards(labels, classes, p.Clients, p.Shards, shardTake(p, p.SamplesPerClient), p.ShardMode == "class_pure", seed)
	if err != nil {
		return nil, nil, err
	}
	cutOfficial(parts, p, p.SamplesPerClient)
	return parts, draw, nil
}

// shardTake is how many samples ClassShards or ClassTest takes of each shard for perClient
// samples a client: all of it with shard_take official (OfficialCut chooses afterwards).
func shardTake(p manifest.PartitionSpec, perClient int) int {
	if p.ShardTake == "official" {
		return 0
	}
	return perClient / p.Shards
}

// cutOfficial applies OfficialCut to every client's joined shards when shard_take is
// official, perClient/shards samples from each cut.
func cutOfficial(parts [][]int, p manifest.PartitionSpec, perClient int) {
	if p.ShardTake != "official" {
		return
	}
	for c := range parts {
		parts[c] = OfficialCut(parts[c], p.Shards, perClient/p.Shards)
	}
}

// pick keeps the clients at idx, in that order, as clients 0, 1, ….
func (a *Assignment) pick(idx []int) *Assignment {
	out := &Assignment{Train: make([][]int, len(idx)), Test: make([][]int, len(idx))}
	for i, c := range idx {
		out.Train[i], out.Test[i] = a.Train[c], a.Test[c]
	}
	return out
}

// gather picks v's entries at idx.
func gather(v []int32, idx []int) []int32 {
	out := make([]int32, len(idx))
	for i, s := range idx {
		out[i] = v[s]
	}
	return out
}

// Encode stores the assignment as a results.Assignment table: rows (client, split,
// sample, label), clients in order, train rows before test rows, samples ascending; the
// dataset's digest and the number of clients in its metadata.
func (a *Assignment) Encode(ds *data.Dataset) ([]byte, error) {
	var rows []results.Assignment
	for c := range a.Train {
		for _, part := range []struct {
			name string
			idx  []int
		}{{"train", a.Train[c]}, {"test", a.Test[c]}} {
			for _, s := range part.idx {
				rows = append(rows, results.Assignment{Client: c, Split: part.name, Sample: s, Label: int(ds.Y[s])})
			}
		}
	}
	return results.Encode(rows, map[string]string{"dataset_digest": ds.Digest, "clients": fmt.Sprint(len(a.Train))})
}

// Decode reads an assignment written by Encode.
func Decode(b []byte) (*Assignment, error) {
	rows, _, err := results.Decode[results.Assignment](b)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, r := range rows {
		if r.Client < 0 {
			return nil, fmt.Errorf("partition table: client %d", r.Client)
		}
		n = max(n, r.Client+1)
	}
	a := &Assignment{Train: make([][]int, n), Test: make([][]int, n)}
	for i, r := range rows {
		switch r.Split {
		case "train":
			a.Train[r.Client] = append(a.Train[r.Client], r.Sample)
		case "test":
			a.Test[r.Client] = append(a.Test[r.Client], r.Sample)
		default:
			return nil, fmt.Errorf("partition table row %d: split %q", i, r.Split)
		}
	}
	return a, nil
}
