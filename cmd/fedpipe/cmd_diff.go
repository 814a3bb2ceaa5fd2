package main

import (
	"fmt"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results/compare"
	"github.com/fedpipe/fedpipe/results/listing"
	"github.com/fedpipe/fedpipe/stages/data"
)

// cmdDiff compares parameters and metrics of two manifests, two grid cells (MANIFEST#CELL,
// CELL a run label without its seed), or a manifest's last recorded run and now.
var cmdDiff = &command{
	name:      "diff",
	overview:  []string{"diff A B                  parameters and metrics side by side (manifests, cells, last run)"},
	usageLine: "fedpipe diff A [B] [flags]",
	long: `Shows the parameters that differ and the metrics side by side (final and best test accuracy,
%, with the difference B − A), and the paired comparison of B against A (over seeds: each
side's mean ± std with its 95% t interval, B − A with its interval and an exact sign-flip
permutation test; over clients: each client's final accuracy paired within its seed, the seeds
pooled, with a Wilcoxon signed-rank test; docs/statistics.md) of
  fedpipe diff a.yaml b.yaml                   two manifests (runs paired by label)
  fedpipe diff 'm.yaml#fedavg lr=0.1' 'm.yaml#fedavg lr=0.01'   two grid cells (paired by seed)
  fedpipe diff m.yaml [--set train.lr=0.2]     the manifest's last recorded run and now
--set applies to both sides (to "now" only in the last form). Runs nothing; exits 0 whatever differs.`,
	groups: manifestGroups,
	flags:  withFlags(diffCmd),
}

// diffCmd is `fedpipe diff A [B]`.
func diffCmd(c *call, f *commonFlags, args []string) error {
	stdout, stderr := c.stdout, c.stderr
	if len(args) < 1 || len(args) > 2 {
		return &exitError{code: exitInvalid, msg: fmt.Sprintf("fedpipe diff: expected A [B], got %d arguments", len(args)),
			hint: "Run 'fedpipe diff --help' for its forms."}
	}
	fail := func(err error) error { return failure("fedpipe diff", err) }
	loader := &data.Loader{DataDir: f.data}
	store, err := f.reader(args[0], stderr) // never creates one, never waits for a run
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	var a, b *compare.Side
	if len(args) == 1 {
		now, g, err := sideOf(args[0], f.set, nil, loader, f.backend, store)
		if err != nil {
			return fail(err)
		}
		// The file's last run; if that is what the file says now, the run before it.
		prev, ok, err := pipeline.ReadRef(store, pipeline.LastManifestRef(g))
		if err == nil && ok && string(prev) == string(g.Manifest.Effective) {
			var p []byte
			var pok bool
			if p, pok, err = pipeline.ReadRef(store, pipeline.PrevManifestRef(g)); pok {
				prev = p
			}
		}
		if err != nil {
			return fail(err)
		}
		if !ok {
			return fail(fmt.Errorf("%s: no run of this manifest recorded in the store to compare with", args[0]))
		}
		if a, _, err = sideOf(args[0], nil, prev, loader, f.backend, store); err != nil {
			return fail(err)
		}
		a.Name, b = args[0]+" (last run)", now
		b.Name = args[0] + " (now)"
	} else {
		if a, _, err = sideOf(args[0], f.set, nil, loader, f.backend, store); err != nil {
			return fail(err)
		}
		if b, _, err = sideOf(args[1], f.set, nil, loader, f.backend, store); err != nil {
			return fail(err)
		}
	}
	params, runs := compare.Sides(a, b)
	paired, err := compare.PairRuns(a, b, store)
	if err != nil {
		return fail(err)
	}
	if f.json {
		return writeJSON(stdout, map[string]any{"a": a.Name, "b": b.Name, "params": params, "runs": runs, "paired": paired})
	}
	compare.WriteSides(stdout, a, b, params, runs)
	compare.WritePaired(stdout, paired)
	return nil
}

// sideOf loads one side: a manifest path, optionally "#CELL", with overrides; effective,
// when set, replaces the file's contents (a recorded manifest).
func sideOf(arg string, sets []string, effective []byte, loader *data.Loader, backend string, store *artifacts.Store) (*compare.Side, *pipeline.Graph, error) {
	path, _, _ := strings.Cut(arg, "#")
	var g *pipeline.Graph
	var err error
	if effective != nil {
		m, perr := manifest.ParseManifest(path, effective)
		if perr != nil {
			return nil, nil, perr
		}
		b, rerr := resolveBackendID(backend)
		if rerr != nil {
			return nil, nil, rerr
		}
		g, err = pipeline.Build(m, pipeline.BuildOptions{Describe: loader.Describe, ShiftFiles: loader.ShiftFiles, Backend: b})
	} else {
		g, _, err = loadGraphSet(path, sets, loader, backend)
	}
	if err != nil {
		return nil, nil, err
	}
	rows, err := listing.List(g, store, listing.CachedIntervals)
	if err != nil {
		return nil, nil, err
	}
	s, err := compare.NewSide(arg, g, rows)
	return s, g, err
}

// resolveBackendID is the id (as in keys) of the backend a --backend flag names.
func resolveBackendID(flag string) (string, error) {
	b, err := model.ResolveBackend(flag)
	if err != nil {
		return "", &manifest.InputError{File: "--backend", Msg: err.Error()}
	}
	return model.BackendID(b), nil
}
