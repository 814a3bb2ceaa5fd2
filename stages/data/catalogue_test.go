package data

import (
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// Every registered dataset has a source, and each def says what validation and the
// estimates need: an image's shape, a flat dataset's features, where to get the files,
// and FL-bench constants for every FL-bench name it gives.
func TestCatalogueDefsComplete(t *testing.T) {
	names := manifest.DatasetNames()
	if len(names) != len(catalogue) || len(byName) != len(catalogue) {
		t.Fatalf("%d registered, %d entries, %d in the catalogue", len(names), len(byName), len(catalogue))
	}
	for _, n := range names {
		d, _ := manifest.LookupDataset(n)
		src := byName[n].src
		switch {
		case src == nil:
			t.Errorf("%s: no source", n)
			continue
		case d.Title == "":
			t.Errorf("%s: no title", n)
		case d.Image && (d.Side <= 0 || d.Channels <= 0):
			t.Errorf("%s: an image dataset without a shape", n)
		case !d.Image && d.Features == 0 && !d.Generated:
			t.Errorf("%s: flat features of unknown size", n)
		case d.Generated && (src.generate == nil || d.DeviceSamples <= 0):
			t.Errorf("%s: generated without a generator or a device size", n)
		case !d.Generated && (src.load == nil || d.Install == "" || src.install != d.Install):
			t.Errorf("%s: read from files without a reader or install help", n)
		}
		fl := []string{d.FLBench}
		for _, v := range d.FLBenchVariants {
			fl = append(fl, v)
		}
		for _, f := range fl {
			if f != "" && len(FLBenchStats[f].Mean) == 0 {
				t.Errorf("%s: FL-bench name %s has no constants in FLBenchStats", n, f)
			}
		}
	}
}

// The report's captions name each dataset as its papers write it.
func TestCatalogueTitles(t *testing.T) {
	for name, want := range map[string]string{"fmnist": "Fashion-MNIST", "synthetic": "Synthetic", "mnist": "MNIST",
		"emnist": "EMNIST", "cifar10": "CIFAR-10", "cifar100": "CIFAR-100", "cifar10c": "CIFAR-10-C", "svhn": "SVHN",
		"medmnist": "MedMNIST", "officehome": "OfficeHome", "miniimagenet": "mini-ImageNet", "har": "HAR", "femnist": "FEMNIST"} {
		if got := manifest.DatasetTitle(name); got != want {
			t.Errorf("%s: title %q, want %q", name, got, want)
		}
	}
}
