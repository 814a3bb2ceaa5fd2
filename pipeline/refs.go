package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"

	"github.com/fedpipe/fedpipe/artifacts"
)

// The store's ref namespaces, all built here:
//
//	checkpoint/<stage key>                  a train stage's resume point (checkpointRef)
//	extend/<extension key>                  the train stages a longer run can extend (extensionRef)
//	last/<manifest>/<file hash>/<stage>     a stage's last successful run from a file (lastRef)
//	manifest/<last stage's key>             the effective manifest of results (ManifestRef)
//	manifest-last/<manifest>/<file hash>    a file's last run's effective manifest (LastManifestRef)
//	manifest-prev/<manifest>/<file hash>    the one before it that ran something else (PrevManifestRef)
//
// <file hash> is fileHash: a manifest copied to another file has refs of its own.
const checkpointPrefix = "checkpoint/"

// checkpointRef names the ref to a train stage's resume point.
func checkpointRef(n *Node) string { return checkpointPrefix + n.Key.String() }

// extensionRef names the ref to the train stages that a run with extension key ek extends.
func extensionRef(ek string) string { return "extend/" + ek }

// fileHash identifies the manifest file of g in ref names: the first 6 bytes of the
// SHA-256 of its absolute path, in hex, after its name.
func fileHash(g *Graph) string {
	file := g.Manifest.File
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	h := sha256.Sum256([]byte(file))
	return g.Manifest.Name + "/" + hex.EncodeToString(h[:6])
}

// lastRef names the ref that records the descriptor of a stage's last successful run from
// this manifest file: another manifest with the same name (a copied YAML) has its own, so
// a stale reason never compares with a run of a different file.
func lastRef(g *Graph, n *Node) string { return "last/" + fileHash(g) + "/" + n.Name }

// ManifestRef names the ref to the effective manifest (file plus overrides) that produced
// the results of graph g: keyed by its last stage's key, which depends on every stage.
func ManifestRef(g *Graph) string { return "manifest/" + g.Nodes[len(g.Nodes)-1].Key.String() }

// LastManifestRef names the ref to the effective manifest of the last run of a manifest
// file (whatever its overrides).
func LastManifestRef(g *Graph) string { return "manifest-last/" + fileHash(g) }

// PrevManifestRef names the ref to the effective manifest of the run of a manifest file
// before its last one that ran something else (for `fedpipe diff MANIFEST`).
func PrevManifestRef(g *Graph) string { return "manifest-prev/" + fileHash(g) }

// RecordManifest stores the effective manifest of g's results beside them, and moves the
// file's previous last run, when it differs, to its previous-run ref.
func RecordManifest(store *artifacts.Store, g *Graph) error {
	if len(g.Nodes) == 0 || len(g.Manifest.Effective) == 0 {
		return nil
	}
	d, err := store.Put(g.Manifest.Effective)
	if err != nil {
		return err
	}
	if err := store.PutRef(ManifestRef(g), d); err != nil {
		return err
	}
	if old, ok, err := store.GetRef(LastManifestRef(g)); err == nil && ok && old != d {
		if err := store.PutRef(PrevManifestRef(g), old); err != nil {
			return err
		}
	}
	return store.PutRef(LastManifestRef(g), d)
}

// ReadRef returns the blob a ref points at; ok is false when there is none (or it is
// unreadable).
func ReadRef(store *artifacts.Store, ref string) ([]byte, bool, error) {
	d, ok, err := store.GetRef(ref)
	if err != nil || !ok {
		return nil, false, err
	}
	b, err := store.Get(d)
	if err != nil {
		return nil, false, nil
	}
	return b, true, nil
}

// RecordedManifest returns the effective manifest recorded for g's results; with
// fallback, else that of the file's last run. ok is false when none was recorded.
func RecordedManifest(store *artifacts.Store, g *Graph, fallback bool) ([]byte, bool, error) {
	refs := []string{ManifestRef(g)}
	if fallback {
		refs = append(refs, LastManifestRef(g))
	}
	for _, r := range refs {
		d, ok, err := store.GetRef(r)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			continue
		}
		b, err := store.Get(d)
		if err != nil {
			continue
		}
		return b, true, nil
	}
	return nil, false, nil
}
