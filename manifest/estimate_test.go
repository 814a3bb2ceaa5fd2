package manifest

import (
	"strings"
	"testing"
)

func TestMemoryEstimateRefusesWithTheEstimate(t *testing.T) {
	lim := DefaultLimits
	lim.MemoryBytes = 1 << 30
	src := "name: t\ndataset: {name: cifar10}\nmodel: {arch: resnet18}\ntrain: {batch_size: 50000}\nmethods: [{name: fedavg}]\n"
	_, err := ParseManifestOptions("m.yaml", []byte(src), Options{Limits: lim})
	if err == nil || !strings.Contains(err.Error(), "m.yaml:4:") || !strings.Contains(err.Error(), "more than this machine's 1.0 GiB") {
		t.Fatalf("got %v", err)
	}
}

// Each dataset's sample size, as its def gives it, is what the estimate and the bounds
// used when the sizes were written out per name.
func TestSampleDims(t *testing.T) {
	for _, c := range []struct {
		ds             DatasetSpec
		dim            float64
		side, channels int
	}{
		{DatasetSpec{Name: "synthetic", Features: 60}, 60, 0, 0},
		{DatasetSpec{Name: "har"}, 561, 0, 0},
		{DatasetSpec{Name: "fmnist"}, 784, 28, 1},
		{DatasetSpec{Name: "mnist"}, 784, 28, 1},
		{DatasetSpec{Name: "emnist", Variant: "letters"}, 784, 28, 1},
		{DatasetSpec{Name: "femnist"}, 784, 28, 1},
		{DatasetSpec{Name: "cifar10"}, 3072, 32, 3},
		{DatasetSpec{Name: "cifar100"}, 3072, 32, 3},
		{DatasetSpec{Name: "cifar10c", Variant: "fog"}, 3072, 32, 3},
		{DatasetSpec{Name: "svhn"}, 3072, 32, 3},
		{DatasetSpec{Name: "medmnist", Variant: "organamnist"}, 2352, 28, 3},
		{DatasetSpec{Name: "officehome"}, 224 * 224 * 3, 224, 3},
		{DatasetSpec{Name: "officehome", ImageSize: 64}, 64 * 64 * 3, 64, 3},
		{DatasetSpec{Name: "miniimagenet"}, 84 * 84 * 3, 84, 3},
	} {
		dim, side, ch := sampleDims(&Run{Dataset: c.ds})
		if dim != c.dim || side != c.side || ch != c.channels {
			t.Errorf("%s: %v %d %d, want %v %d %d", c.ds.Name, dim, side, ch, c.dim, c.side, c.channels)
		}
	}
}

// A generated dataset's estimate counts its devices' mean size and its own classes.
func TestMemoryEstimateGenerated(t *testing.T) {
	r := &Run{Dataset: DatasetSpec{Name: "synthetic", Devices: 30, Features: 60, Classes: 10},
		Model: ModelSpec{Arch: "logreg"}, Partition: PartitionSpec{Clients: 30}, Train: TrainSpec{BatchSize: 10}}
	small := MemoryEstimate(r)
	r.Dataset.Devices = 300
	if big := MemoryEstimate(r); big <= small {
		t.Errorf("300 devices: %v, 30 devices: %v", big, small)
	}
	if got := knownClasses(r); got != 10 {
		t.Errorf("classes %d, want dataset.classes 10", got)
	}
}
