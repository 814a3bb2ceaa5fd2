package main

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/pipeline"
)

// registerSet adds --set/-S, the manifest overrides, to a command's flags.
func registerSet(fs *pflag.FlagSet, sets *[]string) {
	fs.StringArrayVarP(sets, "set", "S", nil, "override a manifest field: `KEY=VALUE` by dotted path, YAML value (train.lr=0.05, seeds=[0,1], methods.fedobp.params.q=0.9995, grid.train.lr=[0.01,0.1]); repeatable")
}

// manifestRef names the ref to the effective manifest (file plus overrides) that produced
// the results of graph g: keyed by its last stage's key, which depends on every stage.
func manifestRef(g *pipeline.Graph) string {
	return "manifest/" + g.Nodes[len(g.Nodes)-1].Key.String()
}

// lastManifestRef names the ref to the effective manifest of the last run of a manifest
// file (whatever its overrides).
func lastManifestRef(g *pipeline.Graph) string {
	file := g.Manifest.File
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	h := sha256.Sum256([]byte(file))
	return "manifest-last/" + g.Manifest.Name + "/" + hex.EncodeToString(h[:6])
}

// prevManifestRef names the ref to the effective manifest of the run of a manifest file
// before its last one that ran something else (for `fedpipe diff MANIFEST`).
func prevManifestRef(g *pipeline.Graph) string {
	return "manifest-prev/" + lastManifestRef(g)[len("manifest-last/"):]
}

// recordManifest stores the effective manifest of g's results beside them, and moves the
// file's previous last run, when it differs, to its previous-run ref.
func recordManifest(store *artifacts.Store, g *pipeline.Graph) error {
	if len(g.Nodes) == 0 || len(g.Manifest.Effective) == 0 {
		return nil
	}
	d, err := store.Put(g.Manifest.Effective)
	if err != nil {
		return err
	}
	if err := store.PutRef(manifestRef(g), d); err != nil {
		return err
	}
	if old, ok, err := store.GetRef(lastManifestRef(g)); err == nil && ok && old != d {
		if err := store.PutRef(prevManifestRef(g), old); err != nil {
			return err
		}
	}
	return store.PutRef(lastManifestRef(g), d)
}

// readRef returns the blob a ref points at; ok is false when there is none (or it is
// unreadable).
func readRef(store *artifacts.Store, ref string) ([]byte, bool, error) {
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

// recordedManifest returns the effective manifest recorded for g's results; with
// fallback, else that of the file's last run. ok is false when none was recorded.
func recordedManifest(store *artifacts.Store, g *pipeline.Graph, fallback bool) ([]byte, bool, error) {
	refs := []string{manifestRef(g)}
	if fallback {
		refs = append(refs, lastManifestRef(g))
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
