package kept

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/pipeline"
)

// A kept-results directory (a directory remote whose results are kept beside the
// manifests, e.g. this repository's reproduced/) also holds an index of the stages it
// keeps, so that a reader can tell a current result from a stale one: the content store
// finds a result only by its exact key, and a key says nothing of what changed.
//
//	cells/<manifest name>/<stage name, path-escaped>.json            made on fpfast, or on no backend
//	cells/<manifest name>/<backend family>/<stage name, path-escaped>.json   made on another backend
//
// Each file names the stage's key and its description (the canonical JSON that was hashed
// into the key: kind, code version, parameters, inputs, backend) when the kept result was
// made. A later version of the same stage whose key differs is stale, and the two
// descriptions say why. The index keeps one result per stage and backend family (fpfast,
// fpcpu, xla-cuda: the backend without its versions, BackendFamily): the reference
// backend's (ReferenceFamily) at the plain path, as before there were others, and each
// other family's in a folder of its name beside it. A stage that computes on no backend
// (a partition) has the one plain entry, shared by every backend's cells.

// ReferenceFamily is the backend family whose kept results the index holds at the plain
// path, and whose result a verdict reads when it has a current one: fpfast, fedpipe's
// default CPU backend (model.CPUBackend).
const ReferenceFamily = "fpfast"

// keptEntry is one stage's index file.
type keptEntry struct {
	Manifest    string          `json:"manifest"`
	Stage       string          `json:"stage"`
	Key         string          `json:"key"`
	Description json.RawMessage `json:"description"`
	// Outputs are the kept result's outputs (name → digest) as its ac/ entry names them
	// when it was recorded: a reader accepts the ac/ entry of Key only when it names these
	// (Fetch), so an entry swapped for another cell's, or pointed at its blobs, is
	// refused. Absent in entries recorded before it was (Bind adds it).
	Outputs map[string]string `json:"outputs,omitempty"`
	// Sizes are the sizes in bytes of those outputs, as the ac/ entry records them: part of
	// the binding, so a size deleted from or inflated in the ac/ entry is refused before a
	// byte of the blob is read, and every blob is decoded only up to its size. Absent in
	// entries recorded before it was (Bind adds it).
	Sizes map[string]int64 `json:"sizes,omitempty"`
}

// maxKeptBlob bounds the size a kept result may record for one output: kept results are
// results only (tables and summaries, the largest a few MB), so a larger size is an edit.
const maxKeptBlob = 256 << 20

// keptPath is the index file of stage name of manifest in dir, made on backend family
// ("" for a stage on no backend).
func keptPath(dir, manifest, family, name string) string {
	if family == "" || family == ReferenceFamily {
		return filepath.Join(dir, "cells", url.PathEscape(manifest), url.PathEscape(name)+".json")
	}
	return filepath.Join(dir, "cells", url.PathEscape(manifest), url.PathEscape(family), url.PathEscape(name)+".json")
}

// Record writes the index entry of stage n of g into the kept-results directory dir
// (as the directory remote writes its objects: a reader never sees half of it), as the
// entry of n's backend family: a kept result of the same stage made on another backend
// keeps its own entry, and one of the same family made by other code or settings is
// replaced, as recomputing a stale cell does.
func Record(dir string, g *pipeline.Graph, n *pipeline.Node) error {
	rec, err := keptOutputs(dir, n.Key.String())
	if err != nil {
		return err
	}
	if why := rec.sizesWhy(); why != "" {
		return fmt.Errorf("%s: %s", filepath.Join(dir, "ac", n.Key.String()), why)
	}
	return writeKept(keptPath(dir, g.Manifest.Name, NodeFamily(n), n.Name), keptEntry{Manifest: g.Manifest.Name, Stage: n.Name,
		Key: n.Key.String(), Description: json.RawMessage(n.Description()), Outputs: rec.Outputs, Sizes: rec.Sizes})
}

// writeKept writes one index file (as the directory remote writes its objects).
func writeKept(path string, e keptEntry) error {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	return remote.WriteFileAtomic(path, append(b, '\n'))
}

// keptRecord is what a reader of the kept index reads of an ac/ entry: its outputs and
// their sizes.
type keptRecord struct {
	Outputs map[string]string `json:"outputs"`
	Sizes   map[string]int64  `json:"sizes"`
}

// sizesWhy says what is wrong with the recorded sizes of rec ("" when every output has
// one, within maxKeptBlob).
func (rec keptRecord) sizesWhy() string {
	for _, name := range slices.Sorted(maps.Keys(rec.Outputs)) {
		n, ok := rec.Sizes[name]
		switch {
		case !ok:
			return fmt.Sprintf("it records no size for output %s", name)
		case n < 0 || n > maxKeptBlob:
			return fmt.Sprintf("it records %d bytes for output %s, more than a kept result's blob may hold (%d)", n, name, maxKeptBlob)
		}
	}
	return ""
}

// keptOutputs reads the outputs, and their sizes, that dir's ac/ entry of key names.
func keptOutputs(dir, key string) (keptRecord, error) {
	path := filepath.Join(dir, "ac", key)
	b, err := remote.ReadRegular(path, maxKeptEntry)
	if err != nil {
		return keptRecord{}, err
	}
	var rec keptRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.Outputs == nil {
		return keptRecord{}, fmt.Errorf("%s: not a result entry", path)
	}
	for _, d := range rec.Outputs {
		if _, err := artifacts.ParseDigest(d); err != nil { // a flipped byte: unreadable, not another cell's
			return keptRecord{}, fmt.Errorf("%s: not a result entry", path)
		}
	}
	return rec, nil
}

// sameSizes reports whether two size maps are the same.
func sameSizes(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for name, n := range a {
		if m, ok := b[name]; !ok || m != n {
			return false
		}
	}
	return true
}

// sameOutputs reports whether two output maps (name → digest) are the same.
func sameOutputs(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for name, d := range a {
		if b[name] != d {
			return false
		}
	}
	return true
}

// indexFiles lists the index files under the manifest folder(s) the pattern manifests
// matches: the reference backend's entries (*.json) and the other families' (*/*.json).
func indexFiles(manifests string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(manifests, "*.json"))
	if err != nil {
		return nil, err
	}
	others, err := filepath.Glob(filepath.Join(manifests, "*", "*.json"))
	return append(files, others...), err
}

// keptOwner names the cell whose index entry in dir binds outputs ("another result" when
// none does).
func keptOwner(dir string, outputs map[string]string) string {
	files, _ := indexFiles(filepath.Join(dir, "cells", "*"))
	for _, path := range files {
		if e, err := readKeptFile(path); err == nil && e.Outputs != nil && sameOutputs(outputs, e.Outputs) {
			return fmt.Sprintf("%s %q (key %s)", e.Manifest, e.Stage, e.Key[:min(12, len(e.Key))])
		}
	}
	return "no kept cell (outputs edited)"
}

// Bind records, in every index entry of the kept-results directory dir that lacks them
// (recorded before entries were bound to their results, or before sizes were part of the
// binding), the outputs its ac/ entry names now and their sizes, and returns how many it
// bound. An entry that binds outputs already gets only the sizes, and only when its ac/
// entry names those same outputs (a binding is never moved to other blobs). Nothing is
// recomputed; run it on a directory whose entries are known to be genuine (as committed):
// it binds what it finds. Entries bound already are left as they are, so it can be rerun
// after new cells are kept.
func Bind(dir string) (int, error) {
	files, err := indexFiles(filepath.Join(dir, "cells", "*"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, path := range files {
		e, err := readKeptFile(path)
		if err != nil {
			return n, err
		}
		if e.Outputs != nil && e.Sizes != nil {
			continue
		}
		rec, err := keptOutputs(dir, e.Key)
		if err != nil {
			return n, err
		}
		if e.Outputs != nil && !sameOutputs(e.Outputs, rec.Outputs) {
			return n, fmt.Errorf("%s binds other outputs than its ac/ entry names (those of %s): not binding sizes to it", path, keptOwner(dir, rec.Outputs))
		}
		if why := rec.sizesWhy(); why != "" {
			return n, fmt.Errorf("%s: %s", filepath.Join(dir, "ac", e.Key), why)
		}
		e.Outputs, e.Sizes = rec.Outputs, map[string]int64{}
		for name := range rec.Outputs {
			e.Sizes[name] = rec.Sizes[name]
		}
		if err := writeKept(path, e); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// BackendFamily is a backend id's backend without its versions ("fpfast", "fpcpu",
// "xla-cuda", from "gomlx@v0.26.0/fpfast@1+gemm-avx2fma+fpcpu@1/fpgraph-4/float32" and the
// like; see model.BackendID), or "" for no id.
func BackendFamily(id string) string {
	if id == "" {
		return ""
	}
	fam := id
	if parts := strings.Split(fam, "/"); len(parts) >= 2 {
		fam = parts[1]
	}
	fam, _, _ = strings.Cut(fam, "@")
	fam, _, _ = strings.Cut(fam, "+")
	return fam
}

// descBackend is the backend id a stage description names ("" for a stage on none).
func descBackend(desc json.RawMessage) string {
	var d struct {
		Backend string `json:"backend"`
	}
	if json.Unmarshal(desc, &d) != nil {
		return ""
	}
	return d.Backend
}

// NodeFamily is the backend family stage n computes on, or for a stage on none, that of
// the first of its inputs computed on one (a report of evaluations), so that each backend's
// results have their own entries; "" for a stage that depends on no backend (a partition).
func NodeFamily(n *pipeline.Node) string {
	if n.Backend != "" {
		return BackendFamily(n.Backend)
	}
	for _, in := range n.Inputs {
		if f := NodeFamily(in); f != "" {
			return f
		}
	}
	return ""
}

// Backends lists the backend ids that the index of manifest in dir records (each
// distinct id once, sorted): the backends whose graphs a reader builds, beside its own, to
// read every kept result.
func Backends(dir, manifest string) ([]string, error) {
	files, err := indexFiles(filepath.Join(dir, "cells", globEscape(url.PathEscape(manifest))))
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var ids []string
	for _, path := range files {
		e, err := readKeptFile(path)
		if err != nil {
			return nil, err
		}
		if id := descBackend(e.Description); id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// globEscape quotes the characters filepath.Match treats as patterns.
func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}

// maxKeptEntry bounds what is read of one index file (each is a few KiB of JSON).
const maxKeptEntry = 16 << 20

// readKept reads the index entry in dir of stage n of manifest, made on n's backend family
// (ok false if there is none). A file that is not a regular one, or is larger than
// maxKeptEntry, is an error naming it.
func readKept(dir, manifest string, n *pipeline.Node) (e keptEntry, ok bool, err error) {
	e, err = readKeptFile(keptPath(dir, manifest, NodeFamily(n), n.Name))
	if errors.Is(err, os.ErrNotExist) {
		return e, false, nil
	}
	return e, err == nil, err
}

// readKeptFile reads one index file.
func readKeptFile(path string) (e keptEntry, err error) {
	b, err := remote.ReadRegular(path, maxKeptEntry)
	if err != nil {
		return e, err
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

// Stale returns, for the kept-results directory dir, a function that says whether
// stage n of g has a kept result made with another key, and why: for n and every stage
// it depends on whose key changed, what changed in its description ("train: stage code
// version 6 → 7"), and how many of those stages' keys changed. A stage with no index
// entry, or whose entry has n's current key, is not stale. old is the kept result's key.
func Stale(dir string, g *pipeline.Graph) func(n *pipeline.Node) (why string, old artifacts.Digest, ok bool) {
	return func(n *pipeline.Node) (string, artifacts.Digest, bool) {
		e, ok, err := readKept(dir, g.Manifest.Name, n)
		if err != nil || !ok || e.Key == n.Key.String() {
			return "", artifacts.Digest{}, false
		}
		old, err := artifacts.ParseDigest(e.Key)
		if err != nil {
			return "", artifacts.Digest{}, false
		}
		var reasons []string
		changed, total := 0, 0
		seen := map[*pipeline.Node]bool{}
		var walk func(m *pipeline.Node)
		walk = func(m *pipeline.Node) {
			if seen[m] {
				return
			}
			seen[m] = true
			for _, in := range m.Inputs {
				walk(in)
			}
			total++
			old, ok, err := readKept(dir, g.Manifest.Name, m)
			if err != nil || !ok {
				changed++
				reasons = append(reasons, m.Kind+": no kept description")
				return
			}
			if old.Key == m.Key.String() {
				return
			}
			changed++
			for _, d := range pipeline.DiffDescriptors(old.Description, m.Description()) {
				if d != "an input stage changed" {
					reasons = append(reasons, m.Kind+": "+d)
				}
			}
		}
		walk(n)
		if len(reasons) == 0 {
			reasons = append(reasons, "keys changed")
		}
		return fmt.Sprintf("%s (%d of %d stage keys changed)", strings.Join(reasons, ", "), changed, total), old, true
	}
}

// Keys returns the keys that the kept-results index of directory dir names (none
// when dir has no index): the result each stage of each manifest last pushed there, on
// each backend family, which a reader reports as current or stale, so gc keeps them
// whatever manifests it is given.
func Keys(dir string) (map[artifacts.Digest]bool, error) {
	keys := map[artifacts.Digest]bool{}
	files, err := indexFiles(filepath.Join(dir, "cells", "*"))
	if err != nil {
		return nil, err
	}
	for _, path := range files {
		e, err := readKeptFile(path)
		if err != nil {
			return nil, err
		}
		key, err := artifacts.ParseDigest(e.Key)
		if err != nil {
			return nil, fmt.Errorf("%s: key: %w", path, err)
		}
		keys[key] = true
	}
	return keys, nil
}

// ErrDamaged matches (errors.Is) the error Fetch returns for a kept result that is
// damaged or missing.
var ErrDamaged = errors.New("kept result damaged or missing")

// keptDamage is Fetch's error: which stage's kept result, and what is wrong with which
// file.
type keptDamage struct {
	manifest, stage, why string
}

func (e *keptDamage) Error() string {
	return fmt.Sprintf("the kept result of %s %q is damaged or missing: %s", e.manifest, e.stage, e.why)
}

func (e *keptDamage) Is(target error) bool { return target == ErrDamaged }

// Fetch copies into store, from the kept-results directory dir opened as r, the kept
// result of every stage of g: the one under the stage's current key, and the one its index
// entry names when that key differs (a stale result, whose figure is still shown). A kept
// result is evidence, so unlike pipeline.Pull, which treats whatever the remote cannot serve as a
// miss to recompute, Fetch fails (an error matching ErrDamaged, naming the stage
// and the file) when an index entry is unreadable, when an entry or output it names is
// missing, or when an entry or output in ac/ or cas/ is damaged. A stage neither indexed
// nor in ac/ is simply not computed.
func Fetch(ctx context.Context, dir string, g *pipeline.Graph, store *artifacts.Store, r *remote.Remote) error {
	for _, n := range g.Nodes {
		damaged := func(why string) error { return &keptDamage{manifest: g.Manifest.Name, stage: n.Name, why: why} }
		e, indexed, err := readKept(dir, g.Manifest.Name, n)
		path := keptPath(dir, g.Manifest.Name, NodeFamily(n), n.Name)
		if err != nil {
			return damaged("its index entry is unreadable: " + err.Error())
		}
		if indexed && (e.Manifest != g.Manifest.Name || e.Stage != n.Name) {
			return damaged(fmt.Sprintf("its index entry %s is the entry of %s %q (a swapped index file)", path, e.Manifest, e.Stage))
		}
		if indexed && e.Outputs == nil {
			return damaged(fmt.Sprintf("its index entry %s binds no outputs (recorded before kept results were bound to their cells: `fedpipe reproduced --bind` binds them)", path))
		}
		if indexed && e.Sizes == nil {
			return damaged(fmt.Sprintf("its index entry %s binds no sizes (recorded before sizes were part of the binding: `fedpipe reproduced --bind` binds them)", path))
		}
		keys := []artifacts.Digest{artifacts.Digest(n.Key)}
		if indexed && e.Key != n.Key.String() {
			old, err := artifacts.ParseDigest(e.Key)
			if err != nil {
				return damaged(fmt.Sprintf("its index entry %s: key: %v", keptPath(dir, g.Manifest.Name, NodeFamily(n), n.Name), err))
			}
			keys = append(keys, old)
		}
		for _, key := range keys {
			if _, ok, err := store.GetAction(key); err != nil {
				return err
			} else if ok {
				continue
			}
			// The entry the index binds, outputs and sizes, checked before anything is read.
			acPath := filepath.Join(dir, "ac", key.String())
			if rec, err := keptOutputs(dir, key.String()); err == nil {
				if indexed && key.String() == e.Key && !sameOutputs(rec.Outputs, e.Outputs) {
					return damaged(fmt.Sprintf("%s is not the result its index entry %s binds: it names the outputs of %s",
						acPath, path, keptOwner(dir, rec.Outputs)))
				}
				if why := rec.sizesWhy(); why != "" {
					return damaged(fmt.Sprintf("%s: %s (a kept result's sizes bound what its blobs may decode to)", acPath, why))
				}
				if indexed && key.String() == e.Key && !sameSizes(rec.Sizes, e.Sizes) {
					return damaged(fmt.Sprintf("%s records other sizes (%s) than its index entry %s binds (%s): a size deleted or edited",
						acPath, remote.FormatSizes(rec.Sizes), path, remote.FormatSizes(e.Sizes)))
				}
			}
			_, ok, _, err := r.FetchActionChecked(ctx, store, key, func(a artifacts.Action) error { return pipeline.CheckIdentity(store, n, a) })
			switch {
			case errors.Is(err, pipeline.ErrWrongCell):
				return damaged(fmt.Sprintf("%s (%s, index entry %s)", err, acPath, path))
			case errors.Is(err, artifacts.ErrNotFound), errors.Is(err, remote.ErrUnbound):
				return damaged(err.Error())
			case err != nil:
				return err
			case !ok && indexed && key.String() == e.Key:
				return damaged(fmt.Sprintf("its index entry %s names result %s, but %s is missing",
					keptPath(dir, g.Manifest.Name, NodeFamily(n), n.Name), key.Short(), filepath.Join(dir, "ac", key.String())))
			}
		}
	}
	return nil
}

// Entries counts the index entries dir records for manifest (0 when dir keeps none
// of its results, or is not a kept-results directory).
func Entries(dir, manifest string) (int, error) {
	files, err := indexFiles(filepath.Join(dir, "cells", globEscape(url.PathEscape(manifest))))
	return len(files), err
}
