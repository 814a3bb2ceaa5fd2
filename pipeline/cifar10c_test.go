package pipeline

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fedpipe/fedpipe/manifest"
)

// shiftKey builds the manifest's graph with a fixed CIFAR-10-C digest and returns the
// shift stage's key and descriptor.
// c10cManifest is a CIFAR-10 run to which the tests add a shift block.
const c10cManifest = `name: c
dataset: {name: cifar10}
partition: {clients: 4}
methods: [{name: fedavg}]
`

func shiftKey(t *testing.T, src, digest string, find error) (Key, []byte, error) {
	t.Helper()
	m, err := manifest.ParseManifest("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Build(m, BuildOptions{Backend: "cpu",
		Describe: func(manifest.DatasetSpec) (*manifest.DataDesc, error) {
			return &manifest.DataDesc{Digest: "d", Shape: []int{32, 32, 3}, Classes: 10, Samples: 60000}, nil
		},
		ShiftFiles: func(s manifest.ShiftSpec, ds manifest.DatasetSpec) (string, error) {
			if ds.Name != "cifar10" || len(s.CIFAR10C) == 0 {
				t.Errorf("CIFAR10C called with %+v %+v", s, ds)
			}
			return digest, find
		}})
	if err != nil {
		return Key{}, nil, err
	}
	for _, n := range g.Nodes {
		if n.Kind == manifest.KindShift {
			return n.Key, n.desc, nil
		}
	}
	t.Fatal("no shift stage")
	return Key{}, nil, nil
}

// The CIFAR-10-C files' digest enters the shift stage's key, their path does not; shift
// blocks without cifar10c keep the parameters (so the keys) they had before it existed; a
// lookup failure is invalid input naming the shift field.
func TestCIFAR10CDigestInShiftKey(t *testing.T) {
	src := c10cManifest + "shift: {cifar10c: [fog], severities: [1]}\n"
	a, desc, err := shiftKey(t, src, "sha256:aa", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(desc), `"cifar10c":"sha256:aa"`) {
		t.Errorf("descriptor lacks the digest: %s", desc)
	}
	b, _, _ := shiftKey(t, c10cManifest+"shift: {cifar10c: [fog], severities: [1], cifar10c_path: /elsewhere}\n", "sha256:aa", nil)
	c, _, _ := shiftKey(t, src, "sha256:bb", nil)
	if a != b {
		t.Error("shift.cifar10c_path changed the key")
	}
	if a == c {
		t.Error("another CIFAR-10-C digest left the key unchanged")
	}
	_, _, err = shiftKey(t, c10cManifest+"shift: {cifar10c: [fog], cifar10c_path: /nope}\n", "", &manifest.InputError{Msg: "dataset cifar10c not found: looked for labels.npy, fog.npy in\n  /nope"})
	if !manifest.IsInvalid(err) || !strings.Contains(err.Error(), "shift.cifar10c_path") || !strings.Contains(err.Error(), "/nope") {
		t.Errorf("missing files: %v", err)
	}
	// A shift block without cifar10c hashes as before the field existed.
	p, err := json.Marshal(shiftParams{Shift: manifest.ShiftSpec{Degrees: []float64{0.5}, Severities: []int{1}}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"personal":false,"shift":{"Degrees":[0.5],"Corruptions":null,"Severities":[1],"LabelAlpha":null},"seed":3}`; string(p) != want {
		t.Errorf("shift params\n got %s\nwant %s", p, want)
	}
}
