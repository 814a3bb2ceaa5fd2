package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/stages/data"
)

// diffSide is one side of `fedpipe diff`: its parameters flattened to dotted paths and its
// runs' metrics, keyed so that the two sides' runs pair up (by run label for manifests, by
// seed for grid cells).
type diffSide struct {
	Name   string
	Params map[string]string
	Runs   map[string]lsRow
	order  []string
}

// diffParam is one parameter that differs; "" means unset.
type diffParam struct {
	Path string `json:"path"`
	A    string `json:"a"`
	B    string `json:"b"`
}

// diffRun is one run's metrics on both sides (percent; nil: not computed or absent).
type diffRun struct {
	Run    string              `json:"run"`
	A      map[string]*float64 `json:"a"`
	B      map[string]*float64 `json:"b"`
	StateA string              `json:"state_a"`
	StateB string              `json:"state_b"`
}

var diffMetrics = []string{"final_client_mean_pct", "final_pooled_pct", "best_pooled_pct"}

// diffCmd compares parameters and metrics of two manifests, two grid cells (MANIFEST#CELL,
// CELL a run label without its seed), or a manifest's last recorded run and now.
func diffCmd(c *call) error {
	args, stdout, stderr := c.args, c.stdout, c.stderr
	fs := c.flags()
	var f commonFlags
	f.register(fs, c.groups)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: fedpipe diff A [B] [flags]

Shows the parameters that differ and the metrics side by side (final and best test accuracy,
%%, with the difference B − A), and the paired comparison of B against A (over seeds: each
side's mean ± std with its 95%% t interval, B − A with its interval and an exact sign-flip
permutation test; over clients: each client's final accuracy paired within its seed, the seeds
pooled, with a Wilcoxon signed-rank test; docs/statistics.md) of
  fedpipe diff a.yaml b.yaml                   two manifests (runs paired by label)
  fedpipe diff 'm.yaml#fedavg lr=0.1' 'm.yaml#fedavg lr=0.01'   two grid cells (paired by seed)
  fedpipe diff m.yaml [--set train.lr=0.2]     the manifest's last recorded run and now
--set applies to both sides (to "now" only in the last form). Runs nothing; exits 0 whatever differs.

Flags:
%s`, fs.FlagUsages())
	}
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return &exitError{code: exitInvalid, msg: fmt.Sprintf("fedpipe diff: expected A [B], got %d arguments", fs.NArg()),
			hint: "Run 'fedpipe diff --help' for its forms."}
	}
	fail := func(err error) error { return failure("fedpipe diff", err) }
	loader := &data.Loader{DataDir: f.data}
	store, err := f.reader(fs.Arg(0), stderr) // never creates one, never waits for a run
	if err != nil {
		return fail(err)
	}
	defer store.Close()
	var a, b *diffSide
	if fs.NArg() == 1 {
		now, g, err := sideOf(fs.Arg(0), f.set, nil, loader, f.backend, store)
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
			return fail(fmt.Errorf("%s: no run of this manifest recorded in the store to compare with", fs.Arg(0)))
		}
		if a, _, err = sideOf(fs.Arg(0), nil, prev, loader, f.backend, store); err != nil {
			return fail(err)
		}
		a.Name, b = fs.Arg(0)+" (last run)", now
		b.Name = fs.Arg(0) + " (now)"
	} else {
		if a, _, err = sideOf(fs.Arg(0), f.set, nil, loader, f.backend, store); err != nil {
			return fail(err)
		}
		if b, _, err = sideOf(fs.Arg(1), f.set, nil, loader, f.backend, store); err != nil {
			return fail(err)
		}
	}
	params, runs := compareSides(a, b)
	paired, err := pairedDiff(a, b, store)
	if err != nil {
		return fail(err)
	}
	if f.json {
		return writeJSON(stdout, map[string]any{"a": a.Name, "b": b.Name, "params": params, "runs": runs, "paired": paired})
	}
	printDiff(stdout, a, b, params, runs)
	printPaired(stdout, paired)
	return nil
}

// sideOf loads one side: a manifest path, optionally "#CELL", with overrides; effective,
// when set, replaces the file's contents (a recorded manifest).
func sideOf(arg string, sets []string, effective []byte, loader *data.Loader, backend string, store *artifacts.Store) (*diffSide, *pipeline.Graph, error) {
	path, cell, isCell := strings.Cut(arg, "#")
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
		g, err = pipeline.Build(m, pipeline.BuildOptions{Describe: loader.Describe, CIFAR10C: loader.CIFAR10C, Backend: b})
	} else {
		g, _, err = loadGraphSet(path, sets, loader, backend)
	}
	if err != nil {
		return nil, nil, err
	}
	rows, err := listRuns(g, store)
	if err != nil {
		return nil, nil, err
	}
	s := &diffSide{Name: arg, Runs: map[string]lsRow{}}
	if !isCell {
		s.Params = manifest.Flatten(g.Manifest.Effective)
		for _, r := range rows {
			s.Runs[r.Label] = r
			s.order = append(s.order, r.Label)
		}
		return s, g, nil
	}
	var configs []string
	for _, n := range g.Nodes {
		if n.Kind != manifest.KindEvaluate || n.Run == nil {
			continue
		}
		if n.Run.Config() != cell {
			configs = append(configs, n.Run.Config())
			continue
		}
		if s.Params == nil {
			s.Params = manifest.FlattenRun(n.Run)
		}
	}
	if s.Params == nil {
		return nil, nil, &manifest.InputError{File: path, Msg: fmt.Sprintf("no grid cell %q (cells: %s)", cell, strings.Join(uniq(configs), "; "))}
	}
	for _, r := range rows {
		if strings.TrimSuffix(r.Label, fmt.Sprintf(" seed=%d", r.Seed)) == cell {
			k := fmt.Sprintf("seed=%d", r.Seed)
			s.Runs[k] = r
			s.order = append(s.order, k)
		}
	}
	return s, g, nil
}

// resolveBackendID is the id (as in keys) of the backend a --backend flag names.
func resolveBackendID(flag string) (string, error) {
	b, err := model.ResolveBackend(flag)
	if err != nil {
		return "", &manifest.InputError{File: "--backend", Msg: err.Error()}
	}
	return model.BackendID(b), nil
}

func uniq(xs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// compareSides lists the parameters that differ and pairs the runs.
func compareSides(a, b *diffSide) ([]diffParam, []diffRun) {
	var params []diffParam
	paths := map[string]bool{}
	for p := range a.Params {
		paths[p] = true
	}
	for p := range b.Params {
		paths[p] = true
	}
	for p := range paths {
		if a.Params[p] != b.Params[p] {
			params = append(params, diffParam{Path: p, A: a.Params[p], B: b.Params[p]})
		}
	}
	sort.Slice(params, func(i, j int) bool { return params[i].Path < params[j].Path })
	params = append([]diffParam{}, params...)
	var runs []diffRun
	keys := uniq(append(append([]string{}, a.order...), b.order...))
	for _, k := range keys {
		ra, okA := a.Runs[k]
		rb, okB := b.Runs[k]
		d := diffRun{Run: k, A: map[string]*float64{}, B: map[string]*float64{}, StateA: "absent", StateB: "absent"}
		for _, m := range diffMetrics {
			if okA {
				d.A[m] = ra.Metric(m)
			}
			if okB {
				d.B[m] = rb.Metric(m)
			}
		}
		if okA {
			d.StateA = ra.State
		}
		if okB {
			d.StateB = rb.State
		}
		runs = append(runs, d)
	}
	return params, runs
}

func printDiff(w io.Writer, a, b *diffSide, params []diffParam, runs []diffRun) {
	fmt.Fprintf(w, "A: %s\nB: %s\n\n", a.Name, b.Name)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(params) == 0 {
		fmt.Fprintln(w, "parameters: identical")
	} else {
		fmt.Fprintln(tw, "parameter\tA\tB")
		for _, p := range params {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Path, orDash(p.A), orDash(p.B))
		}
		_ = tw.Flush()
	}
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "run\tfinal % A\tB\tΔ\tpooled % A\tB\tΔ\tbest pooled % A\tB\tΔ")
	for _, r := range runs {
		cells := []string{r.Run}
		for _, m := range diffMetrics {
			va, vb := r.A[m], r.B[m]
			cells = append(cells, pctOr(va, r.StateA), pctOr(vb, r.StateB), delta(va, vb))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	_ = tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

func pctOr(v *float64, state string) string {
	if v == nil {
		return state
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

func delta(a, b *float64) string {
	if a == nil || b == nil || math.IsNaN(*a) || math.IsNaN(*b) {
		return ""
	}
	return fmt.Sprintf("%+.2f", *b-*a)
}
