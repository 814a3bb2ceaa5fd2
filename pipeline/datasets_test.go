package pipeline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// Runs that differ only in a dataset variant describe (and key) their data separately.
func TestBuildDescribesEachVariant(t *testing.T) {
	m, err := manifest.ParseManifest("m.yaml", []byte("name: t\ndataset: {name: cifar10c, severity: 1}\ngrid: {dataset.variant: [fog, frost]}\npartition: {clients: 4}\nmethods: [{name: fedavg}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	g, err := Build(m, BuildOptions{Describe: func(ds manifest.DatasetSpec) (*manifest.DataDesc, error) {
		asked = append(asked, ds.Variant)
		return &manifest.DataDesc{Digest: "sha256:" + ds.Variant, Shape: []int{32, 32, 3}, Classes: 10, Samples: 10000}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(asked, ",") != "fog,frost" {
		t.Errorf("described %v, want fog and frost once each", asked)
	}
	keys := map[Key]bool{}
	for _, n := range g.Nodes {
		if n.Kind == manifest.KindPartition {
			keys[n.Key] = true
		}
	}
	if len(keys) != 2 {
		t.Errorf("%d distinct partition keys for two variants", len(keys))
	}
}

// Synthetic data swept over its generator's parameters is described once per value: each
// value's digest enters its stages' keys (a sweep of dataset.alpha once reused the first
// value's description, and the run stopped with "dataset synthetic changed while running").
func TestBuildDescribesEachSyntheticSetting(t *testing.T) {
	m, err := manifest.ParseManifest("m.yaml", []byte("name: t\ndataset: {name: synthetic, devices: 6}\ngrid: {dataset.alpha: [0.5, 1], dataset.beta: [0, 1], dataset.devices: [6, 8]}\nmethods: [{name: fedavg}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	asked := map[string]bool{}
	g, err := Build(m, BuildOptions{Describe: func(ds manifest.DatasetSpec) (*manifest.DataDesc, error) {
		id := fmt.Sprintf("%g/%g/%d", ds.Alpha, ds.Beta, ds.Devices)
		if asked[id] {
			t.Errorf("%s described twice", id)
		}
		asked[id] = true
		return &manifest.DataDesc{Digest: "sha256:" + id, Shape: []int{60}, Classes: 10, Samples: 1000}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 8 {
		t.Errorf("described %d settings, want all 8: %v", len(asked), asked)
	}
	keys := map[Key]bool{}
	for _, n := range g.Nodes {
		if n.Kind == manifest.KindPartition {
			keys[n.Key] = true
		}
	}
	if len(keys) != 8 {
		t.Errorf("%d distinct partition keys for 8 settings", len(keys))
	}
}
