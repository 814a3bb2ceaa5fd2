package partition

import (
	"reflect"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/stages/data"
)

// The partition stage deals with Run.PartitionSeed: runs of seeds 0 and 1 under
// partition.seed 42 get one assignment; without it, two.
func TestMakeWithPartitionSeed(t *testing.T) {
	n := 600
	ds := &data.Dataset{Name: "t", Shape: []int{1}, Classes: 3, X: make([]float32, n), Y: make([]int32, n)}
	for i := range ds.Y {
		ds.Y[i] = int32(i % 3)
	}
	make2 := func(p manifest.PartitionSpec) []*Assignment {
		var out []*Assignment
		for _, seed := range []int64{0, 1} {
			r := manifest.Run{Seed: seed, Partition: p}
			a, err := Make(ds, manifest.DatasetSpec{}, p, r.PartitionSeed())
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, a)
		}
		return out
	}
	p := manifest.PartitionSpec{Scheme: "dirichlet", Clients: 5, Alpha: 0.5, MinSamples: 10, TestFraction: 0.25, BalanceCap: "false"}
	if a := make2(p); reflect.DeepEqual(a[0], a[1]) {
		t.Error("seeds 0 and 1 without partition.seed dealt the same assignment")
	}
	seed := int64(42)
	p.Seed = &seed
	if a := make2(p); !reflect.DeepEqual(a[0], a[1]) {
		t.Error("seeds 0 and 1 under partition.seed 42 dealt different assignments")
	}
}
