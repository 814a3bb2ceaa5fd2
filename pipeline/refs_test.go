package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
)

// refGraph is a one-stage graph of the manifest file /m/a.yaml named tab.
func refGraph(effective string) *Graph {
	return &Graph{Manifest: &manifest.Manifest{Name: "tab", File: "/m/a.yaml", Effective: []byte(effective)},
		Nodes: []*Node{{Name: "train fedavg seed=0", Key: Key{0xab}}}}
}

// The ref names are part of the store's format: a store written by an earlier fedpipe keeps
// its checkpoints, last runs and recorded manifests.
func TestRefNamesKeepTheirFormat(t *testing.T) {
	g := refGraph("")
	sum := sha256.Sum256([]byte("/m/a.yaml"))
	file := "tab/" + hex.EncodeToString(sum[:6])
	key := g.Nodes[0].Key.String()
	for got, want := range map[string]string{
		checkpointRef(g.Nodes[0]): "checkpoint/" + key,
		extensionRef("e1"):        "extend/e1",
		lastRef(g, g.Nodes[0]):    "last/" + file + "/train fedavg seed=0",
		ManifestRef(g):            "manifest/" + key,
		LastManifestRef(g):        "manifest-last/" + file,
		PrevManifestRef(g):        "manifest-prev/" + file,
	} {
		if got != want {
			t.Errorf("ref %q, want %q", got, want)
		}
	}
}

// RecordManifest keeps the file's previous last run when it differs, and RecordedManifest
// reads a graph's own manifest first, else (with fallback) the file's last run.
func TestRecordManifestKeepsThePreviousRun(t *testing.T) {
	s, err := artifacts.Open(t.TempDir(), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first, second := refGraph("seeds: [0]\n"), refGraph("seeds: [1]\n")
	second.Nodes[0].Key = Key{0xcd}
	for _, g := range []*Graph{first, second} {
		if err := RecordManifest(s, g); err != nil {
			t.Fatal(err)
		}
	}
	for ref, want := range map[string]string{LastManifestRef(first): "seeds: [1]\n", PrevManifestRef(first): "seeds: [0]\n",
		ManifestRef(first): "seeds: [0]\n"} {
		if b, ok, err := ReadRef(s, ref); err != nil || !ok || string(b) != want {
			t.Errorf("%s: %q, %v, %v; want %q", ref, b, ok, err, want)
		}
	}
	other := refGraph("")
	other.Nodes[0].Key = Key{0xef}
	if _, ok, _ := RecordedManifest(s, other, false); ok {
		t.Error("a graph never recorded has a manifest without fallback")
	}
	if b, ok, _ := RecordedManifest(s, other, true); !ok || string(b) != "seeds: [1]\n" {
		t.Errorf("fallback: %q, %v; want the file's last run", b, ok)
	}
}
