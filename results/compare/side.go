package compare

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results/listing"
)

// Side is one side of a comparison: its parameters flattened to dotted paths and its runs'
// rows, keyed so that the two sides' runs pair up (by run label for manifests, by seed for
// grid cells).
type Side struct {
	// Name is how the side is shown ("A: ...").
	Name string
	// Params are the side's parameters by dotted path (manifest.Flatten).
	Params map[string]string
	// Runs are the side's runs by pairing key.
	Runs  map[string]listing.Row
	order []string
}

// Param is one parameter that differs; "" means unset.
type Param struct {
	Path string `json:"path"`
	A    string `json:"a"`
	B    string `json:"b"`
}

// Run is one run's metrics on both sides (percent; nil: not computed or absent).
type Run struct {
	Run    string              `json:"run"`
	A      map[string]*float64 `json:"a"`
	B      map[string]*float64 `json:"b"`
	StateA string              `json:"state_a"`
	StateB string              `json:"state_b"`
}

// Metrics are the metrics compared, in the order of the tables.
var Metrics = []string{"final_client_mean_pct", "final_pooled_pct", "best_pooled_pct"}

// NewSide is the side arg names, a manifest path optionally followed by "#CELL" (a run
// label without its seed), from its graph g and the rows listed of g's runs.
func NewSide(arg string, g *pipeline.Graph, rows []listing.Row) (*Side, error) {
	path, cell, isCell := strings.Cut(arg, "#")
	s := &Side{Name: arg, Runs: map[string]listing.Row{}}
	if !isCell {
		s.Params = manifest.Flatten(g.Manifest.Effective)
		for _, r := range rows {
			s.Runs[r.Label] = r
			s.order = append(s.order, r.Label)
		}
		return s, nil
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
		return nil, &manifest.InputError{File: path, Msg: fmt.Sprintf("no grid cell %q (cells: %s)", cell, strings.Join(uniq(configs), "; "))}
	}
	for _, r := range rows {
		if strings.TrimSuffix(r.Label, fmt.Sprintf(" seed=%d", r.Seed)) == cell {
			k := fmt.Sprintf("seed=%d", r.Seed)
			s.Runs[k] = r
			s.order = append(s.order, k)
		}
	}
	return s, nil
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

// Sides lists the parameters that differ and pairs the runs.
func Sides(a, b *Side) ([]Param, []Run) {
	var params []Param
	paths := map[string]bool{}
	for p := range a.Params {
		paths[p] = true
	}
	for p := range b.Params {
		paths[p] = true
	}
	for p := range paths {
		if a.Params[p] != b.Params[p] {
			params = append(params, Param{Path: p, A: a.Params[p], B: b.Params[p]})
		}
	}
	sort.Slice(params, func(i, j int) bool { return params[i].Path < params[j].Path })
	params = append([]Param{}, params...)
	var runs []Run
	keys := uniq(append(append([]string{}, a.order...), b.order...))
	for _, k := range keys {
		ra, okA := a.Runs[k]
		rb, okB := b.Runs[k]
		d := Run{Run: k, A: map[string]*float64{}, B: map[string]*float64{}, StateA: "absent", StateB: "absent"}
		for _, m := range Metrics {
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
