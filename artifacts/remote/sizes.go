package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
)

// SizesReport says what RecordSizes did.
type SizesReport struct {
	// Rewritten lists the entries given their outputs' sizes; Complete counts the entries
	// that recorded every size already.
	Rewritten []artifacts.Digest
	Complete  int
	// Skipped says, for each entry left as it was, why: unreadable, or an output missing
	// or corrupt (its size cannot be known, and a reader treats the entry as a miss anyway).
	Skipped []string
}

// RecordSizes gives every action entry of the remote that lacks some of its outputs' sizes
// (entries written before sizes were recorded) the size of each output, taken from the
// output blob itself, read and verified against its digest; nothing is recomputed, and
// the outputs, metadata and version of the entry stay as they were. A reader then refuses
// an output object larger than its entry allows without reading it, instead of reading up
// to the 8 GiB that an entry without sizes allows. Entries that record every size are not
// rewritten.
func (r *Remote) RecordSizes(ctx context.Context) (SizesReport, error) {
	var rep SizesReport
	objs, err := r.objs.Scan(ctx, r.object("ac/"))
	if err != nil {
		return rep, r.scrub(fmt.Errorf("remote %s: list results: %w", r, err))
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].Name < objs[j].Name })
	for _, o := range objs {
		key, err := artifacts.ParseDigest(strings.TrimPrefix(o.Name, "/"))
		if err != nil {
			continue // not an entry (a temporary file of a writer)
		}
		rec, ok, err := r.readAction(ctx, key)
		if err != nil {
			return rep, err
		}
		if !ok || rec.Outputs == nil {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: unreadable entry (%s)", key, rec.unreadable))
			continue
		}
		sizes := map[string]int64{}
		for name, n := range rec.Sizes {
			if _, ok := rec.Outputs[name]; ok {
				sizes[name] = n
			}
		}
		if len(sizes) == len(rec.Outputs) {
			rep.Complete++
			continue
		}
		why := ""
		for _, name := range sortedOutputNames(rec.Outputs) {
			if _, ok := sizes[name]; ok {
				continue
			}
			data, err := r.getBlob(ctx, rec.Outputs[name], -1)
			if err != nil {
				why = fmt.Sprintf("output %s: %v", name, err)
				break
			}
			sizes[name] = int64(len(data))
		}
		if why != "" {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s (%s): %s", key, rec.Meta["name"], why))
			continue
		}
		raw, err := json.Marshal(actionRecord{V: rec.V, Outputs: rec.Outputs, Meta: rec.Meta, Sizes: sizes})
		if err != nil {
			return rep, err
		}
		if err := r.put(ctx, r.object(actionObject(key)), raw, "application/json"); err != nil {
			return rep, r.scrub(fmt.Errorf("remote %s: rewrite result %s: %w", r, key.Short(), err))
		}
		rep.Rewritten = append(rep.Rewritten, key)
	}
	return rep, nil
}

// sortedOutputNames returns the names of outputs in order.
func sortedOutputNames(outputs map[string]artifacts.Digest) []string {
	names := make([]string, 0, len(outputs))
	for n := range outputs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// sizedBinding is the digest that ties an entry's outputs and their recorded sizes to its
// key, hex: SHA-256 over a version line, the key and each output's name, digest and size
// (-1 for none recorded) in name order. Binding (artifacts.Binding) covers the key and the
// outputs; this covers the sizes too, so a reader refuses an entry whose sizes were
// deleted or inflated after it was written, instead of reading up to the 8 GiB an entry
// without sizes allows.
func sizedBinding(key artifacts.Digest, outputs map[string]artifacts.Digest, sizes map[string]int64) string {
	h := sha256.New()
	fmt.Fprintf(h, "fedpipe-binding/2\n%s\n", key)
	for _, name := range sortedOutputNames(outputs) {
		n, ok := sizes[name]
		if !ok {
			n = -1
		}
		fmt.Fprintf(h, "%s\x00%s\x00%d\n", name, outputs[name], n)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// FormatSizes formats recorded sizes for messages, by output name ("metrics 40970, work
// 128938"; "none" when there are none).
func FormatSizes(sizes map[string]int64) string {
	names := make([]string, 0, len(sizes))
	for name := range sizes {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %d", name, sizes[name])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
