package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
)

// onlyGraphs applies --only to the graphs of the manifests a command reads: each keeps the
// runs of the labels it has (pipeline.Only) and a graph with none of them is left out. A
// label no manifest has is an input error naming them; with one manifest it is
// pipeline.Only's, which lists the manifest's labels. No labels: the graphs as they are.
func onlyGraphs(graphs []*pipeline.Graph, labels []string) ([]*pipeline.Graph, error) {
	if len(labels) == 0 {
		return graphs, nil
	}
	if len(graphs) == 1 {
		g, err := pipeline.Only(graphs[0], labels)
		return []*pipeline.Graph{g}, err
	}
	var out []*pipeline.Graph
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
		kept, err := pipeline.Only(g, have)
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

// onlyExpect applies verify's --only to g: the expect entries of the labels, and the runs
// of those labels and of the methods their entries are compared with ("above"). It returns
// the graph, with a copy of its manifest holding those entries, and the labels whose runs
// it keeps (for --run).
func onlyExpect(g *pipeline.Graph, labels []string) (*pipeline.Graph, []string, error) {
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
	kept, err := pipeline.Only(g, runs)
	if err != nil {
		return nil, nil, err
	}
	kept.Manifest = &m
	return kept, runs, nil
}
