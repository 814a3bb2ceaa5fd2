package partition

import (
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/results"
	"github.com/fedpipe/fedpipe/stages/data"
)

func TestMakeDomainNaturalAndFraction(t *testing.T) {
	n := 400
	ds := &data.Dataset{Name: "t", Shape: []int{1}, Classes: 4, X: make([]float32, n), Y: make([]int32, n),
		Groups: make([]int32, n), Domains: make([]int32, n)}
	for i := 0; i < n; i++ {
		ds.Y[i], ds.Domains[i] = int32(i%4), int32(i%3)
		ds.Groups[i] = int32(i % 5)
		if i%5 == 4 && i > 20 { // group 4 keeps only 5 samples
			ds.Groups[i] = 3
		}
	}
	a, err := Make(ds, manifest.DatasetSpec{}, manifest.PartitionSpec{Scheme: "domain", Clients: 3, TestFraction: 0.25}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for c := range a.Train {
		size := 133 + btoi(c == 0)
		if len(a.Train[c])+len(a.Test[c]) != size || len(a.Test[c]) != (size+2)/4 {
			t.Errorf("domain client %d: %d train %d test", c, len(a.Train[c]), len(a.Test[c]))
		}
		for _, s := range append(a.Train[c], a.Test[c]...) {
			if int(ds.Domains[s]) != c {
				t.Fatalf("client %d holds sample %d of domain %d", c, s, ds.Domains[s])
			}
		}
	}
	a, err = Make(ds, manifest.DatasetSpec{}, manifest.PartitionSpec{Scheme: "natural", MinSamples: 10, TestFraction: 0.25}, 1)
	if err != nil || a.Clients() != 4 {
		t.Fatalf("natural with min_samples 10 kept %d clients (want 4: group 4 has 5 samples): %v", a.Clients(), err)
	}
	a, err = Make(ds, manifest.DatasetSpec{Fraction: 0.5, MaxSamples: 100}, manifest.PartitionSpec{Scheme: "iid", Clients: 2, TestFraction: 0.25}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(a.Train[0]) + len(a.Test[0]) + len(a.Train[1]) + len(a.Test[1]); got != 100 {
		t.Errorf("fraction 0.5 then max_samples 100 dealt %d samples", got)
	}
	if _, err := Make(ds, manifest.DatasetSpec{}, manifest.PartitionSpec{Scheme: "domain", Clients: 4, TestFraction: 0.25}, 1); err == nil {
		t.Error("4 clients for 3 domains accepted")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// An assignment survives its table: clients in order, train before test, labels from the
// dataset; a bad split or client is an error.
func TestAssignmentEncodeDecode(t *testing.T) {
	ds := &data.Dataset{Y: []int32{3, 1, 4, 1, 5}, Digest: "d"}
	a := &Assignment{Train: [][]int{{0, 2}, {1}}, Test: [][]int{{4}, {3}}}
	b, err := a.Encode(ds)
	if err != nil {
		t.Fatal(err)
	}
	rows, meta, err := results.Decode[results.Assignment](b)
	if err != nil {
		t.Fatal(err)
	}
	want := []results.Assignment{{Client: 0, Split: "train", Sample: 0, Label: 3}, {Client: 0, Split: "train", Sample: 2, Label: 4}, {Client: 0, Split: "test", Sample: 4, Label: 5}, {Client: 1, Split: "train", Sample: 1, Label: 1}, {Client: 1, Split: "test", Sample: 3, Label: 1}}
	if !reflect.DeepEqual(rows, want) || meta["dataset_digest"] != "d" || meta["clients"] != "2" {
		t.Errorf("rows %v meta %v", rows, meta)
	}
	back, err := Decode(b)
	if err != nil || !reflect.DeepEqual(back, a) {
		t.Errorf("Decode = %+v, %v", back, err)
	}
	for _, bad := range [][]results.Assignment{{{Client: 0, Split: "val", Sample: 0, Label: 0}}, {{Client: -1, Split: "train", Sample: 0, Label: 0}}} {
		b, _ := results.Encode(bad, nil)
		if _, err := Decode(b); err == nil {
			t.Errorf("%v decoded", bad)
		}
	}
}
