package kept

import (
	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/pipeline"
	"github.com/fedpipe/fedpipe/results/listing"
)

// curves sets the kept curve of every method the manifest of graphs records an authors'
// log of beside that log (CompareCurve), reading the kept train results fetched
// into store: those of the first graph (backend) that holds any for the method.
func curves(graphs []*pipeline.Graph, store *artifacts.Store) ([]CurveCheck, error) {
	if len(graphs) == 0 {
		return nil, nil
	}
	m := graphs[0].Manifest
	var out []CurveCheck
	for _, l := range m.Logs {
		var pts []listing.CurvePoint
		seeds := 0
		for _, g := range graphs {
			p, n, err := listing.KeptCurve(g, store, l.Method)
			if err != nil {
				return nil, err
			}
			if n > 0 {
				pts, seeds = p, n
				break
			}
		}
		c := CompareCurve(l, m.Train.Rounds, pts, seeds, m.DeviationOf(l.Method))
		c.OnLog = l.Deviation != ""
		out = append(out, c)
	}
	return out, nil
}
