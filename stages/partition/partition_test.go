package partition

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func labels(n, classes int) []int32 {
	y := make([]int32, n)
	for i := range y {
		y[i] = int32((i * 7) % classes)
	}
	return y
}

// everyIndexOnce checks that parts cover [0, n) exactly once (or at most once if partial).
func everyIndexOnce(t *testing.T, parts [][]int, n int, full bool) {
	t.Helper()
	seen := make([]bool, n)
	total := 0
	for _, p := range parts {
		for _, i := range p {
			if seen[i] {
				t.Fatalf("sample %d dealt twice", i)
			}
			seen[i] = true
			total++
		}
	}
	if full && total != n {
		t.Fatalf("dealt %d of %d samples", total, n)
	}
}

func TestDirichletSizesSkewAndDeterminism(t *testing.T) {
	y := labels(6000, 10)
	parts, err := Dirichlet(y, 10, 20, 0.1, 10, 42)
	if err != nil {
		t.Fatal(err)
	}
	everyIndexOnce(t, parts, len(y), true)
	dominant := 0.0
	for _, p := range parts {
		if len(p) < 10 {
			t.Fatalf("client with %d < 10 samples", len(p))
		}
		counts := make([]int, 10)
		for _, i := range p {
			counts[y[i]]++
		}
		mx := 0
		for _, c := range counts {
			mx = max(mx, c)
		}
		dominant += float64(mx) / float64(len(p))
	}
	dominant /= float64(len(parts))
	// With α = 0.1 a client's largest class holds most of its data; IID would give ~0.1.
	if dominant < 0.5 {
		t.Errorf("Dir(0.1): mean share of a client's largest class = %.2f, want > 0.5", dominant)
	}
	again, _ := Dirichlet(y, 10, 20, 0.1, 10, 42)
	if !reflect.DeepEqual(parts, again) {
		t.Error("same seed gave a different partition")
	}
	other, _ := Dirichlet(y, 10, 20, 0.1, 10, 43)
	if reflect.DeepEqual(parts, other) {
		t.Error("different seeds gave the same partition")
	}
	// Large α approaches IID proportions.
	flat, _ := Dirichlet(y, 10, 5, 1000, 10, 1)
	for c, p := range flat {
		counts := make([]int, 10)
		for _, i := range p {
			counts[y[i]]++
		}
		for k, n := range counts {
			if share := float64(n) / float64(len(p)); share < 0.07 || share > 0.13 {
				t.Errorf("Dir(1000) client %d class %d share %.3f, want ≈ 0.1", c, k, share)
			}
		}
	}
}

func TestDirichletImpossibleMinimumFails(t *testing.T) {
	if _, err := Dirichlet(labels(100, 10), 10, 10, 0.1, 50, 0); err == nil {
		t.Fatal("10 clients × 50 samples from 100 cannot succeed")
	}
}

func TestShardsGiveFewClasses(t *testing.T) {
	y := labels(2000, 10)
	parts, err := Shards(y, 10, 2, 100, 7)
	if err != nil {
		t.Fatal(err)
	}
	everyIndexOnce(t, parts, len(y), false)
	for c, p := range parts {
		if len(p) != 100 {
			t.Errorf("client %d has %d samples, want 100", c, len(p))
		}
		classes := map[int32]bool{}
		for _, i := range p {
			classes[y[i]] = true
		}
		if len(classes) > 2 {
			t.Errorf("client %d holds %d classes from 2 shards", c, len(classes))
		}
	}
	all, err := Shards(y, 10, 2, 0, 7)
	if err != nil {
		t.Fatal(err)
	}
	everyIndexOnce(t, all, len(y), true)
}

func TestIIDAndSplit(t *testing.T) {
	parts := IID(103, 10, 3)
	everyIndexOnce(t, parts, 103, true)
	for _, p := range parts {
		if len(p) < 10 || len(p) > 11 {
			t.Errorf("IID part of %d", len(p))
		}
	}
	train, test := Split(parts[0], 0.25, 3, 0)
	if len(test) != 3 && len(test) != 2 || len(train)+len(test) != len(parts[0]) {
		t.Errorf("split %d into %d train / %d test", len(parts[0]), len(train), len(test))
	}
	train2, test2 := Split(parts[0], 0.25, 3, 0)
	if !reflect.DeepEqual(train, train2) || !reflect.DeepEqual(test, test2) {
		t.Error("split is not deterministic")
	}
	if _, test := Split([]int{1, 2}, 0.1, 0, 0); len(test) != 1 {
		t.Errorf("two samples must give one test sample, got %d", len(test))
	}
}

func TestNaturalAndSubset(t *testing.T) {
	parts, err := Natural([]int32{0, 1, 1, 2, 0}, 3, 0, 0)
	if err != nil || !reflect.DeepEqual(parts, [][]int{{0, 4}, {1, 2}, {3}}) {
		t.Errorf("natural = %v, %v", parts, err)
	}
	if _, err := Natural([]int32{3}, 3, 0, 0); err == nil {
		t.Error("3 clients from 1 group accepted")
	}
	s := Subset(1000, 10, 1)
	if len(s) != 10 || !reflect.DeepEqual(s, Subset(1000, 10, 1)) {
		t.Errorf("subset %v", s)
	}
}

func TestPathologicalClassesAndQuantitySkew(t *testing.T) {
	y := labels(10000, 10)
	parts, err := Pathological(y, 10, 20, 2, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	everyIndexOnce(t, parts, len(y), true)
	for c, p := range parts {
		classes := map[int32]bool{}
		for _, i := range p {
			classes[y[i]] = true
		}
		if len(classes) != 2 {
			t.Errorf("client %d holds %d classes, want 2", c, len(classes))
		}
		// 20 clients × 2 classes over 10 classes: 4 holders per class of 1000 samples.
		if len(p) != 500 {
			t.Errorf("client %d holds %d samples, want 500 without skew", c, len(p))
		}
	}
	skewed, err := Pathological(y, 10, 100, 2, 0.9, 5)
	if err != nil {
		t.Fatal(err)
	}
	everyIndexOnce(t, skewed, len(y), true)
	sizes := make([]int, len(skewed))
	for c, p := range skewed {
		sizes[c] = len(p)
	}
	sort.Ints(sizes)
	small := 0
	for _, n := range sizes[:90] {
		small += n
	}
	// The 90 smallest clients (the skew group) hold about half of the data.
	if share := float64(small) / float64(len(y)); share < 0.4 || share > 0.6 {
		t.Errorf("90%% of the clients hold %.2f of the data, want ≈ 0.5 (sizes %v)", share, sizes)
	}
	if sizes[99] < 5*sizes[0] {
		t.Errorf("largest client %d vs smallest %d: no quantity skew", sizes[99], sizes[0])
	}
	again, _ := Pathological(y, 10, 100, 2, 0.9, 5)
	if !reflect.DeepEqual(skewed, again) {
		t.Error("same seed gave a different partition")
	}
	if _, err := Pathological(y, 10, 5, 11, 0, 0); err == nil {
		t.Error("11 classes per client from 10 accepted")
	}
}

func TestDomainPartition(t *testing.T) {
	parts, err := Domain([]int32{1, 0, 1, 2, 0}, 3)
	if err != nil || !reflect.DeepEqual(parts, [][]int{{1, 4}, {0, 2}, {3}}) {
		t.Errorf("domain = %v, %v", parts, err)
	}
	if _, err := Domain([]int32{0, 1, 2}, 2); err == nil || !strings.Contains(err.Error(), "partition.clients") {
		t.Errorf("3 domains on 2 clients: %v", err)
	}
	if _, err := Domain([]int32{0, 0}, 2); err == nil {
		t.Error("an empty domain accepted")
	}
}

func TestNaturalMinSamplesAndSeededChoice(t *testing.T) {
	// Groups 5, 7, 9 have 3 samples, group 8 has 1.
	g := []int32{5, 7, 9, 5, 7, 9, 5, 7, 9, 8}
	parts, err := Natural(g, 0, 2, 0)
	if err != nil || !reflect.DeepEqual(parts, [][]int{{0, 3, 6}, {1, 4, 7}, {2, 5, 8}}) {
		t.Fatalf("min_samples 2: %v, %v", parts, err)
	}
	if _, err := Natural(g, 4, 2, 0); err == nil || !strings.Contains(err.Error(), "only 3 of the 4") {
		t.Errorf("4 clients from 3 kept groups: %v", err)
	}
	seen := map[string]bool{}
	for seed := int64(0); seed < 20; seed++ {
		two, err := Natural(g, 2, 2, seed)
		if err != nil || len(two) != 2 || two[0][0] >= two[1][0] {
			t.Fatalf("seed %d: %v %v", seed, two, err)
		}
		again, _ := Natural(g, 2, 2, seed)
		if !reflect.DeepEqual(two, again) {
			t.Fatal("same seed chose different clients")
		}
		seen[fmt.Sprint(two)] = true
	}
	if len(seen) < 2 {
		t.Error("the chosen clients never depend on the seed")
	}
}

func TestFractionThenMaxSamples(t *testing.T) {
	f := Fraction(1000, 0.2, 3)
	if len(f) != 200 || !sort.IntsAreSorted(f) || !reflect.DeepEqual(f, Fraction(1000, 0.2, 3)) {
		t.Fatalf("fraction gave %d samples", len(f))
	}
	if all := Fraction(10, 0, 3); len(all) != 10 {
		t.Errorf("fraction 0 kept %d of 10", len(all))
	}
}

// cutCumulative cuts where numpy's np.split(idx, (np.cumsum(p)*n).astype(int)[:-1]) does
// (FL-bench's Dirichlet, uglyghost+FedOBP data/utils/schemes/dirichlet.py:49-55). By hand:
// n = 10, p = (0.25, 0.5, 0.25): cumsum·10 = (2.5, 7.5, 10), truncated cuts (2, 7), sizes
// 2, 5, 3; p = (0.19, 0.8, 0.01): (1.9, 9.9, 10) → cuts (1, 9), sizes 1, 8, 1 (truncation,
// not rounding, which would give 2, 8, 0); p = (0, 1, 0): cuts (0, 10), sizes 0, 10, 0.
func TestCutCumulativeAsNumpy(t *testing.T) {
	idx := []int{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}
	for _, c := range []struct {
		p    []float64
		want [][]int
	}{
		{[]float64{0.25, 0.5, 0.25}, [][]int{{10, 11}, {12, 13, 14, 15, 16}, {17, 18, 19}}},
		{[]float64{0.19, 0.8, 0.01}, [][]int{{10}, {11, 12, 13, 14, 15, 16, 17, 18}, {19}}},
		{[]float64{0, 1, 0}, [][]int{nil, idx, nil}},
	} {
		out := make([][]int, 3)
		cutCumulative(out, idx, c.p, 1)
		if !reflect.DeepEqual(out, c.want) {
			t.Errorf("p %v: cut %v, want %v", c.p, out, c.want)
		}
	}
}

// FL-bench takes int(n·test_ratio) test samples (generate_data.py:229 of the FedOBP
// authors' fork): 10 samples at 0.25 give 2 there and round(2.5) = 3 to nearest (Go's
// math.Round rounds half away from zero); 7 give 1 and 2; 2 samples still give one test
// sample either way.
func TestSplitRoundsDownAsFLBench(t *testing.T) {
	idx := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	for _, c := range []struct {
		n, nearest, floor int
	}{{10, 3, 2}, {7, 2, 1}, {2, 1, 1}} {
		_, near := SplitRounded(idx[:c.n], 0.25, false, 1, 0)
		train, fl := SplitRounded(idx[:c.n], 0.25, true, 1, 0)
		if len(near) != c.nearest || len(fl) != c.floor || len(train)+len(fl) != c.n {
			t.Errorf("n %d: %d nearest, %d floor (+%d train); want %d and %d", c.n, len(near), len(fl), len(train), c.nearest, c.floor)
		}
	}
}
