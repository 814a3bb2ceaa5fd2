package pipeline

import (
	"fmt"
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
