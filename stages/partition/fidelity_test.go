package partition

import (
	"slices"
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

// OfficialCut against slices worked out by hand from utils/sampling.py's
// [k:k+size] for k in range(0, n, n//s+1), with Python's meaning of size −1.
func TestOfficialCut(t *testing.T) {
	seq := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = 100 + i
		}
		return out
	}
	cases := []struct {
		n, shards, size int
		want            []int
	}{
		{10, 2, 2, []int{100, 101, 106, 107}},                                // step 6
		{10, 2, 0, []int{100, 101, 102, 103, 104, 105, 106, 107, 108}},       // [0:-1], then [6:5] empty
		{10, 2, 5, []int{100, 101, 102, 103, 104, 106, 107, 108, 109}},       // [0:5], [6:11] clipped
		{9, 3, 2, []int{100, 101, 104, 105, 108}},                            // step 4: k = 0, 4, 8
		{100, 2, 0, append(seq(99)[:0:0], seq(99)...)},                       // a test share of 100 → 99
		{500, 2, 50, append(append([]int{}, seq(50)...), seq(301)[251:]...)}, // shard 2 from its 2nd sample
	}
	for _, c := range cases {
		got := OfficialCut(seq(c.n), c.shards, c.size)
		if len(got) != len(c.want) {
			t.Fatalf("n %d shards %d size %d: %v, want %v", c.n, c.shards, c.size, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("n %d shards %d size %d: %v, want %v", c.n, c.shards, c.size, got, c.want)
			}
		}
	}
}

// FedSelect's official data: 100 users partitioned into class-pure shards, 10 of them
// drawn, each client's shards cut as utils/sampling.py cuts them (100 training samples:
// the first 50 of one shard and samples 2–51 of the other; 99 of its 100 official test
// samples).
func TestPopulationDrawAndOfficialCut(t *testing.T) {
	const classes, train, test = 10, 50000, 10000 // CIFAR-10
	ds := &data.Dataset{Name: "t", Shape: []int{1}, Classes: classes, X: make([]float32, train+test), Y: make([]int32, train+test), TestStart: train}
	for i := range ds.Y {
		ds.Y[i] = int32((i * 3) % classes)
	}
	p := manifest.PartitionSpec{Scheme: "shards", Clients: 10, Population: 100, Shards: 2, SamplesPerClient: 100, ShardMode: "official", TestSource: "official", ShardTake: "official"}
	a, err := Make(ds, manifest.DatasetSpec{}, p, 5)
	if err != nil {
		t.Fatal(err)
	}
	all := p
	all.Clients, all.Population = 100, 0
	whole, err := Make(ds, manifest.DatasetSpec{}, all, 5)
	if err != nil {
		t.Fatal(err)
	}
	// rank[s] is sample s's position among its class's samples of its split.
	rank := make([]int, len(ds.Y))
	seenTrain, seenTest := make([]int, classes), make([]int, classes)
	for s, y := range ds.Y {
		if s < train {
			rank[s], seenTrain[y] = seenTrain[y], seenTrain[y]+1
		} else {
			rank[s], seenTest[y] = seenTest[y], seenTest[y]+1
		}
	}
	drawn := map[int]bool{}
	for c := range a.Train {
		// The client is one of the 100 users, unchanged.
		u := -1
		for v := range whole.Train {
			if slices.Equal(whole.Train[v], a.Train[c]) && slices.Equal(whole.Test[v], a.Test[c]) {
				u = v
			}
		}
		if u < 0 || drawn[u] {
			t.Fatalf("client %d is not a distinct user of the 100-user partition (user %d)", c, u)
		}
		drawn[u] = true
		// Shards of a class are 250 consecutive ranks (test shares 50): one training run
		// starts a shard, the other one sample into one; the test runs are a whole share
		// and the next share less its last sample (one run of 99 when both are one class).
		trainRuns, testRuns := runs(a.Train[c], ds.Y, rank), runs(a.Test[c], ds.Y, rank)
		if len(a.Train[c]) != 100 || len(trainRuns) != 2 || trainRuns[0].n != 50 || trainRuns[1].n != 50 ||
			trainRuns[0].start%250+trainRuns[1].start%250 != 1 {
			t.Errorf("client %d: training runs %v, want 50 from a shard's start and 50 from one past it", c, trainRuns)
		}
		okTest := len(testRuns) == 1 && testRuns[0].n == 99 && testRuns[0].start%50 == 0
		okTest = okTest || len(testRuns) == 2 && testRuns[0].n+testRuns[1].n == 99 && testRuns[0].n*testRuns[1].n == 50*49 &&
			testRuns[0].start%50 == 0 && testRuns[1].start%50 == 0
		if !okTest {
			t.Errorf("client %d: test runs %v, want a share of 50 and 49 of the next", c, testRuns)
		}
	}
	other, err := Make(ds, manifest.DatasetSpec{}, p, 6)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(other.Train[0], a.Train[0]) && slices.Equal(other.Train[9], a.Train[9]) {
		t.Error("another seed drew the same users")
	}
}

type run struct{ class, start, n int }

// runs groups samples (sorted by class, then rank) into runs of consecutive ranks.
func runs(samples []int, y []int32, rank []int) []run {
	s := append([]int(nil), samples...)
	sort.Slice(s, func(i, j int) bool {
		if y[s[i]] != y[s[j]] {
			return y[s[i]] < y[s[j]]
		}
		return rank[s[i]] < rank[s[j]]
	})
	var out []run
	for i, v := range s {
		if i > 0 && y[v] == y[s[i-1]] && rank[v] == rank[s[i-1]]+1 {
			out[len(out)-1].n++
			continue
		}
		out = append(out, run{int(y[v]), rank[v], 1})
	}
	return out
}
