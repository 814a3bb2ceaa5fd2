package kept

import (
	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results/listing"
)

// curves sets the kept curve of every method the manifest of graphs records an authors'
// log of beside that log (CompareCurve), reading the kept train results fetched
// into store: those of the first graph (backend) that holds any for the method. In a
// manifest that records logs, a method kept with no logs entry (its log, or absent) gets
// its curve alone, marked NoEntry, which fails the check as a curve off its log does.
func curves(graphs []*pipeline.Graph, store *artifacts.Store) ([]CurveCheck, error) {
	if len(graphs) == 0 {
		return nil, nil
	}
	m := graphs[0].Manifest
	kept := func(label string) ([]listing.CurvePoint, int, error) {
		for _, g := range graphs {
			p, n, err := listing.KeptCurve(g, store, label)
			if err != nil || n > 0 {
				return p, n, err
			}
		}
		return nil, 0, nil
	}
	var out []CurveCheck
	for _, l := range m.Logs {
		pts, seeds, err := kept(l.Method)
		if err != nil {
			return nil, err
		}
		c := CompareCurve(l, m.Train.Rounds, pts, seeds, m.DeviationOf(l.Method))
		c.OnLog = l.Deviation != ""
		out = append(out, c)
	}
	if len(m.Logs) == 0 {
		return out, nil
	}
	for _, ms := range m.Methods {
		if m.LogOf(ms.Name) != nil {
			continue
		}
		pts, seeds, err := kept(ms.Name)
		if err != nil {
			return nil, err
		}
		if seeds > 0 {
			c := CompareCurve(manifest.LoggedRun{Method: ms.Name}, m.Train.Rounds, pts, seeds, "")
			c.NoEntry = true
			out = append(out, c)
		}
	}
	return out, nil
}
