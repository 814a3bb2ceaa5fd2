package partition

import (
	"sort"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/data"
)

// FedSelect's CIFAR-10 setting as its official code deals it: class-pure shards, every
// class used equally often, two distinct classes per client, each client's test set drawn
// from the official test split for its classes.
func TestClassPureShardsWithOfficialTestSplit(t *testing.T) {
	const classes, train, test = 10, 5000, 1000
	ds := &data.Dataset{Name: "t", Shape: []int{1}, Classes: classes, X: make([]float32, train+test), Y: make([]int32, train+test), TestStart: train}
	for i := range ds.Y {
		ds.Y[i] = int32((i * 3) % classes)
	}
	p := manifest.PartitionSpec{Scheme: "shards", Clients: 10, Shards: 2, SamplesPerClient: 100, ShardMode: "class_pure", TestSource: "official", TestPerClient: 40}
	a, err := Make(ds, manifest.DatasetSpec{}, p, 3)
	if err != nil {
		t.Fatal(err)
	}
	uses := make([]int, classes)
	seen := map[int]bool{}
	for c := range a.Train {
		if len(a.Train[c]) != 100 || len(a.Test[c]) != 40 {
			t.Fatalf("client %d: %d train, %d test samples, want 100 and 40", c, len(a.Train[c]), len(a.Test[c]))
		}
		count := map[int32]int{}
		for _, s := range a.Train[c] {
			if s >= train {
				t.Fatalf("client %d trains on official test sample %d", c, s)
			}
			count[ds.Y[s]]++
		}
		if len(count) != 2 {
			t.Fatalf("client %d holds classes %v, want 2 distinct", c, count)
		}
		for cls, n := range count {
			if n != 50 {
				t.Errorf("client %d: %d samples of class %d, want a class-pure shard of 50", c, n, cls)
			}
			uses[cls]++
		}
		for _, s := range a.Test[c] {
			if s < train || count[ds.Y[s]] == 0 {
				t.Fatalf("client %d tests on sample %d (class %d), not an official test sample of its classes", c, s, ds.Y[s])
			}
			if seen[s] {
				t.Fatalf("test sample %d dealt twice", s)
			}
			seen[s] = true
		}
	}
	for cls, n := range uses {
		if n != 2 {
			t.Errorf("class %d used by %d clients, want every class equally often (2)", cls, n)
		}
	}
	// Today's behaviour stays the default, and the official draw may repeat a class.
	p.TestSource, p.ShardMode, p.TestFraction = "", "", 0.25
	if _, err := Make(ds, manifest.DatasetSpec{}, p, 3); err != nil {
		t.Fatal(err)
	}
	repeated := false
	for seed := int64(0); seed < 50 && !repeated; seed++ {
		_, draw, err := ClassShards(ds.Y[:train], classes, 10, 2, 50, false, seed)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range draw {
			repeated = repeated || d[0] == d[1]
		}
	}
	if !repeated {
		t.Error("shard_mode official never gave a client one class twice in 50 seeds")
	}
}

// DM-PFL's Dirichlet without the balance cap gives more quantity skew than FL-bench's.
func TestDirichletWithoutBalanceCap(t *testing.T) {
	y := labels(6000, 10)
	spread := func(parts [][]int) int {
		sizes := make([]int, len(parts))
		for i, p := range parts {
			sizes[i] = len(p)
		}
		sort.Ints(sizes)
		return sizes[len(sizes)-1]
	}
	capped, err := Dirichlet(y, 10, 20, 0.1, 10, 7)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := DirichletUncapped(y, 10, 20, 0.1, 10, 7)
	if err != nil {
		t.Fatal(err)
	}
	everyIndexOnce(t, raw, len(y), true)
	limit := len(y) / 20
	if spread(raw) <= spread(capped) || spread(raw) < 2*limit {
		t.Errorf("largest client: uncapped %d, capped %d (cap %d): want the uncapped draw well above the cap", spread(raw), spread(capped), limit)
	}
}

// DM-PFL's pathological split: random class pairs (more than the C/s cyclic ones) and
// quantities drawn uniformly within the 90 %/10 % halves.
func TestPathologicalRandomPairsAndUniformQuantities(t *testing.T) {
	y := labels(20000, 10)
	parts, err := PathologicalRandom(y, 10, 100, 2, 0.9, true, true, 5)
	if err != nil {
		t.Fatal(err)
	}
	everyIndexOnce(t, parts, len(y), true)
	pairs := map[[2]int32]bool{}
	sizes := map[int]bool{}
	for c, p := range parts {
		cls := map[int32]bool{}
		for _, i := range p {
			cls[y[i]] = true
		}
		if len(cls) != 2 {
			t.Fatalf("client %d holds %d classes", c, len(cls))
		}
		var k []int32
		for x := range cls {
			k = append(k, x)
		}
		sort.Slice(k, func(a, b int) bool { return k[a] < k[b] })
		pairs[[2]int32{k[0], k[1]}] = true
		sizes[len(p)] = true
	}
	if len(pairs) <= 5 {
		t.Errorf("%d distinct class pairs, want more than the 5 cyclic ones", len(pairs))
	}
	if len(sizes) < 50 {
		t.Errorf("%d distinct client sizes among 100: quantities not drawn", len(sizes))
	}
	cyc, err := Pathological(y, 10, 100, 2, 0.9, 5)
	if err != nil {
		t.Fatal(err)
	}
	cycPairs := map[[2]int32]bool{}
	for _, p := range cyc {
		a, b := y[p[0]], y[p[0]]
		for _, i := range p {
			if y[i] != a {
				b = y[i]
			}
		}
		cycPairs[[2]int32{min(a, b), max(a, b)}] = true
	}
	if len(cycPairs) > 5 {
		t.Errorf("the default (cyclic) split has %d pairs, want at most 5", len(cycPairs))
	}
}
