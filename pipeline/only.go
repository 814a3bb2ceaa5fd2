package pipeline

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/manifest"
)

// Only returns the part of g that computes the runs of the named method labels: their
// stages and everything those depend on, in g's order, without the report (which covers
// every run). Keys are unchanged, so what it computes is what the whole graph would; a
// label the manifest does not have is an input error naming the manifest's labels.
func Only(g *Graph, labels []string) (*Graph, error) {
	want := map[string]bool{}
	for _, l := range labels {
		want[strings.TrimSpace(l)] = true
	}
	have := map[string]bool{}
	for _, ms := range g.Manifest.Methods {
		have[ms.Name] = true
	}
	for l := range want {
		if !have[l] {
			names := make([]string, 0, len(have))
			for n := range have {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, &manifest.InputError{File: "--only", Msg: fmt.Sprintf("no method labelled %q in %s (methods: %s)",
				l, g.Manifest.File, strings.Join(names, ", "))}
		}
	}
	keep := map[*Node]bool{}
	var mark func(n *Node)
	mark = func(n *Node) {
		if keep[n] {
			return
		}
		keep[n] = true
		for _, in := range n.Inputs {
			mark(in)
		}
	}
	for _, n := range g.Nodes {
		if n.Kind == manifest.KindReport {
			continue
		}
		for _, r := range n.RunsOf() {
			if want[r.MethodName] {
				mark(n)
				break
			}
		}
	}
	out := &Graph{Manifest: g.Manifest}
	for _, n := range g.Nodes {
		if keep[n] {
			out.Nodes = append(out.Nodes, n)
		}
	}
	return out, nil
}

// OnlyGraphs applies --only to the graphs of the manifests a command reads: each keeps the
// runs of the labels it has (Only) and a graph with none of them is left out. A
// label no manifest has is an input error naming them; with one manifest it is
// Only's, which lists the manifest's labels. No labels: the graphs as they are.
func OnlyGraphs(graphs []*Graph, labels []string) ([]*Graph, error) {
	if len(labels) == 0 {
		return graphs, nil
	}
	if len(graphs) == 1 {
		g, err := Only(graphs[0], labels)
		return []*Graph{g}, err
	}
	var out []*Graph
	found := map[string]bool{}
	var files []string
	for _, g := range graphs {
		files = append(files, g.Manifest.File)
		var have []string
		for _, l := range labels {
			l = strings.TrimSpace(l)
			if slices.ContainsFunc(g.Manifest.Methods, func(m manifest.MethodSpec) bool { return m.Name == l }) {
				have = append(have, l)
				found[l] = true
			}
		}
		if len(have) == 0 {
			continue
		}
		kept, err := Only(g, have)
		if err != nil {
			return nil, err
		}
		out = append(out, kept)
	}
	for _, l := range labels {
		if l = strings.TrimSpace(l); !found[l] {
			return nil, &manifest.InputError{File: "--only", Msg: fmt.Sprintf("no method labelled %q in %s", l, strings.Join(files, ", "))}
		}
	}
	return out, nil
}

// OnlyExpect applies verify's --only to g: the expect entries of the labels, and the runs
// of those labels and of the methods their entries are compared with ("above"). It returns
// the graph, with a copy of its manifest holding those entries, and the labels whose runs
// it keeps (for --run).
func OnlyExpect(g *Graph, labels []string) (*Graph, []string, error) {
	if len(labels) == 0 {
		return g, nil, nil
	}
	want := map[string]bool{}
	for _, l := range labels {
		want[strings.TrimSpace(l)] = true
	}
	runs := slices.Clone(labels)
	m := *g.Manifest
	m.Expect = nil
	for _, e := range g.Manifest.Expect {
		if want[e.Method] {
			m.Expect = append(m.Expect, e)
			if e.Above != "" && !slices.Contains(runs, e.Above) {
				runs = append(runs, e.Above)
			}
		}
	}
	kept, err := Only(g, runs)
	if err != nil {
		return nil, nil, err
	}
	kept.Manifest = &m
	return kept, runs, nil
}
