package pipeline

import (
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
