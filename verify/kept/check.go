package kept

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/artifacts/remote"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
	"github.com/fedpipe/fedpipe/verify"
)

// Options are how Check builds a manifest's graphs: the command's settings.
type Options struct {
	// Set are the --set overrides, Loader finds the datasets, Limits bound the manifest.
	Set    []string
	Loader *data.Loader
	Limits manifest.Limits
	// Load builds path's graph with overrides set for the command's backend and returns
	// the backend id it resolved.
	Load func(path string, set []string) (*pipeline.Graph, string, error)
	// Build builds path's graph with overrides set for backend id.
	Build func(path string, set []string, backend string) (*pipeline.Graph, error)
}

// Check verifies one manifest against the kept results: the results the kept
// directory holds for its stages are fetched into store (a throwaway), then verified
// with partial seeds and stale detection. A manifest whose data is missing, or that
// has no expectations, comes back skipped.
func Check(ctx context.Context, path string, o Options, dir string, r *remote.Remote,
	store *artifacts.Store) (Manifest, []*pipeline.Graph, error) {
	loader := o.Loader
	km := Manifest{File: path}
	// A missing dataset is a reason to skip the manifest, not an error: find it before the
	// graph is built (which reports it as an input error at dataset.path). Missing initial
	// weights (model.init) are what the manifest's cells need: the graph is built without
	// them only to list those cells.
	set, needs := o.Set, ""
	if m, err := manifest.LoadManifestOptions(path, manifest.Options{Overrides: o.Set, Limits: o.Limits}); err == nil {
		var missing *data.MissingDataError
		if _, err := loader.Describe(m.Dataset); errors.As(err, &missing) {
			km.Name = m.Name
			km.Skipped = "data not installed (" + missing.Dataset + ")"
			km.Claims = verify.Unchecked(m, km.Skipped)
			if init := missingInit(m); init != "" {
				km.NeedsInit, _, _ = strings.Cut(init, " (")
			}
			return km, nil, nil
		}
		if needs = missingInit(m); needs != "" {
			set = append(slices.Clone(o.Set), "model.init=")
		}
	}
	g, backend, err := o.Load(path, set)
	if err != nil {
		return km, nil, err
	}
	if needs != "" {
		km.Name = g.Manifest.Name
		cells, err := verify.VerifyWith(g, store, verify.Options{PartialSeeds: true})
		if err != nil {
			return km, nil, err
		}
		for i := range cells {
			cells[i].Verdict, cells[i].Needs = verify.Needs, needs
		}
		km.Cells, km.Provenance = cells, make([][]string, len(cells))
		km.Claims = verify.Unchecked(g.Manifest, "its cells need "+needs)
		return km, nil, nil
	}
	km.Name = g.Manifest.Name
	if len(g.Manifest.Expect) == 0 {
		km.Skipped = NoExpect
		return km, nil, nil
	}
	// Each cell reads the kept result of one backend (Choose): this one's (the
	// reference, fpfast, unless --backend says otherwise), or another's that the index
	// keeps, read against the keys this code gives that backend (model.CurrentBackendID):
	// stale when code or settings changed, never because this machine lacks the backend.
	reading, err := readReading(ctx, dir, g, store, r)
	if err != nil {
		return km, nil, err
	}
	readings, graphs := []Reading{reading}, []*pipeline.Graph{g}
	ids, err := Backends(dir, g.Manifest.Name)
	if err != nil {
		return km, nil, err
	}
	seen := map[string]bool{BackendFamily(model.BackendID(backend)): true}
	for _, id := range ids {
		cur := model.CurrentBackendID(id)
		if seen[cur] || seen[BackendFamily(cur)] {
			continue
		}
		seen[cur] = true
		gb, err := o.Build(path, set, cur)
		if err != nil {
			return km, nil, err
		}
		rb, err := readReading(ctx, dir, gb, store, r)
		if err != nil {
			return km, nil, err
		}
		readings, graphs = append(readings, rb), append(graphs, gb)
	}
	km.Cells, km.Provenance = Choose(readings)
	if km.Claims, err = verify.Claims(graphs, store); err != nil {
		return km, nil, err
	}
	if km.Curves, err = curves(graphs, store); err != nil {
		return km, nil, err
	}
	return km, graphs, nil
}

// readReading reads the published cells of g (built for one backend) from the kept results:
// every kept result of its stages, a stale cell's under its old key included (its figure
// is shown), is fetched into store; one that is damaged or missing fails the command,
// naming it.
func readReading(ctx context.Context, dir string, g *pipeline.Graph, store *artifacts.Store, r *remote.Remote) (Reading, error) {
	rd := Reading{Family: BackendFamily(graphBackend(g))}
	if err := Fetch(ctx, dir, g, store, r); err != nil {
		return rd, err
	}
	cells, err := verify.VerifyWith(g, store, verify.Options{PartialSeeds: true, Stale: Stale(dir, g)})
	if err != nil {
		return rd, err
	}
	rd.Cells = cells
	for _, c := range cells {
		var lines []string
		for _, rp := range c.Provenance {
			lines = append(lines, fmt.Sprintf("seed %d: %s", rp.Seed, provenanceLine(rp.Train)))
		}
		sort.Strings(lines)
		rd.Provenance = append(rd.Provenance, lines)
	}
	return rd, nil
}

// graphBackend is the backend id g's train stages compute with ("" when it has none).
func graphBackend(g *pipeline.Graph) string {
	for _, n := range g.Nodes {
		if n.Backend != "" {
			return n.Backend
		}
	}
	return ""
}

// missingInit describes the initial-weights file m's model.init names when it does not
// exist (relative to the working directory, as the graph reads it); "" when m has none or
// it is there.
func missingInit(m *manifest.Manifest) string {
	if m.Model.Init == "" {
		return ""
	}
	if _, err := os.Stat(m.Model.Init); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return "model.init: " + m.Model.Init + " (pretrained initial weights, not obtainable here; docs/methods.md, \"Initial weights\")"
}

// provenanceLine condenses how a kept train stage was made: CPU (or backend), threads,
// wall time, the process's peak memory, date and commit.
func provenanceLine(p *pipeline.Provenance) string {
	if p == nil {
		return "no record"
	}
	var parts []string
	if p.CPU != "" {
		parts = append(parts, p.CPU+", "+p.ThreadsText()+" threads")
	}
	if p.Backend != "" {
		parts = append(parts, p.Backend)
	}
	if total, all := totalSeconds(p); total > 0 {
		t := (time.Duration(total) * time.Second).Round(time.Minute).String()
		switch {
		case len(p.Segments) > 1 && all:
			t += " in all"
		case len(p.Segments) > 1:
			t = "at least " + t + " in all (a part's time is not recorded)"
		}
		parts = append(parts, t)
	}
	if m := p.PeakRSSMiB(); m != "" {
		parts = append(parts, "peak RSS "+m+" MiB")
	}
	if p.Date != "" {
		parts = append(parts, p.Date)
	}
	if p.Commit != "" {
		parts = append(parts, "commit "+p.ShortCommit())
	}
	if len(parts) == 0 {
		return "no record"
	}
	line := strings.Join(parts, ", ")
	if len(p.Segments) > 0 { // the fields above are the last process's
		segs := make([]string, len(p.Segments))
		for i, s := range p.Segments {
			segs[i] = s.Text()
		}
		line += " (in parts: " + strings.Join(segs, "; ") + ")"
	}
	return line
}

// totalSeconds is the wall time a train stage took: the sum over its parts when it was
// trained in parts (all: every part recorded its time), else its one process's.
func totalSeconds(p *pipeline.Provenance) (total float64, all bool) {
	if len(p.Segments) == 0 {
		return p.Seconds, true
	}
	all = true
	for _, s := range p.Segments {
		if s.Seconds <= 0 {
			all = false
		}
		total += s.Seconds
	}
	return total, all
}

// Header names the columns of reproduced's text table (verify.Cell.Row's).
var Header = []string{"method", "cell", "metric", "expected", "measured (mean of the kept seeds ± std over them)", "diff", "verdict"}

// TablePatterns are the manifests of the papers' tables, as the Makefile's TABLE_MANIFESTS
// names them: reproduced with no MANIFEST checks these.
var TablePatterns = []string{"fedobp-*.yaml", "fedselect-*.yaml", "dmpfl-*.yaml", "table1.yaml"}

// TableManifests lists the table manifests in dir (TablePatterns), sorted, relative to the
// working directory where they are below it.
func TableManifests(dir string) ([]string, error) {
	var paths []string
	for _, p := range TablePatterns {
		m, err := filepath.Glob(filepath.Join(dir, p))
		if err != nil {
			return nil, err
		}
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		return nil, &manifest.InputError{File: dir, Msg: "no table manifests here to check; name them: fedpipe reproduced MANIFEST..."}
	}
	sort.Strings(paths)
	if wd, err := os.Getwd(); err == nil {
		for i, p := range paths {
			if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
				paths[i] = rel
			}
		}
	}
	return paths, nil
}

// NoExpect is why a manifest without expect entries is not checked.
const NoExpect = "no expect entries"
