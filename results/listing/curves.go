package listing

import (
	"slices"
	"strconv"
	"strings"

	"github.com/fedpipe/fedpipe/artifacts"
	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/pipeline"
)

// CurvePoint is one evaluation round of a kept curve: pooled test accuracy (percent)
// before fine-tuning and, where the run fine-tunes, after.
type CurvePoint struct {
	Round  int
	Before float64
	After  *float64
}

// KeptCurve is the curve of the method labelled label from the train results store
// holds for g: the pooled test accuracy before and after fine-tuning at each evaluation
// round, the mean over the seeds whose train result is there (seeds: how many; 0 and no
// points when none is).
func KeptCurve(g *pipeline.Graph, store *artifacts.Store, label string) ([]CurvePoint, int, error) {
	type sum struct {
		before, after float64
		n, nAfter     int
	}
	byRound := map[int]*sum{}
	seeds := 0
	for _, n := range g.Nodes {
		if n.Kind != manifest.KindTrain || n.Run == nil || !labelled(n, label) {
			continue
		}
		ms, err := trainMetrics(store, n)
		if err != nil {
			return nil, 0, err
		}
		evals := EvalsOf(ms)
		if len(evals) == 0 {
			continue
		}
		seeds++
		for _, e := range evals {
			s := byRound[e.Round]
			if s == nil {
				s = &sum{}
				byRound[e.Round] = s
			}
			s.before += e.Pooled
			s.n++
			if e.PooledFT != nil {
				s.after += *e.PooledFT
				s.nAfter++
			}
		}
	}
	var pts []CurvePoint
	for r, s := range byRound {
		p := CurvePoint{Round: r, Before: s.before / float64(s.n)}
		if s.nAfter == s.n {
			a := s.after / float64(s.nAfter)
			p.After = &a
		}
		pts = append(pts, p)
	}
	slices.SortFunc(pts, func(a, b CurvePoint) int { return a.Round - b.Round })
	return pts, seeds, nil
}

// labelled reports whether train stage n is (or is shared by) the run labelled label.
func labelled(n *pipeline.Node, label string) bool {
	if n.Run.MethodName == label {
		return true
	}
	for _, r := range n.Also {
		if r.MethodName == label {
			return true
		}
	}
	return false
}

// methodLabel is the method label of the run of stage n that row label lists: n's own,
// or that of a run sharing the stage (Node.Also) whose label the row's begins with.
func methodLabel(n *pipeline.Node, label string) string {
	for _, r := range n.Also {
		if strings.HasPrefix(label, r.MethodName+" ") {
			return r.MethodName
		}
	}
	return n.Run.MethodName
}

// withLogged sets, on the evaluations of the run labelled label, the figures g's manifest
// records from its authors' log at the same rounds (manifest.LoggedRun).
func withLogged(evals []Eval, g *pipeline.Graph, label string) {
	l := g.Manifest.LogOf(label)
	if l == nil {
		return
	}
	for i := range evals {
		for _, le := range l.Evals {
			if le.Round == evals[i].Round {
				b := le.Before
				evals[i].Logged, evals[i].LoggedFT = &b, le.After
			}
		}
	}
}

// hasLogged reports whether any evaluation of rows has a logged figure beside it.
func hasLogged(rows []Row) bool {
	for _, r := range rows {
		for _, e := range r.Evals {
			if e.Logged != nil {
				return true
			}
		}
	}
	return false
}

// loggedCells are the logged columns of an evaluation row: the logged pooled figure
// before fine-tuning, kept − logged, then the same after fine-tuning (figures written by
// num, differences by diff); "" where the log has none.
func loggedCells(e Eval, num, diff func(float64) string) []string {
	c := []string{"", "", "", ""}
	if e.Logged != nil {
		c[0], c[1] = num(*e.Logged), diff(e.Pooled-*e.Logged)
	}
	if e.LoggedFT != nil {
		c[2] = num(*e.LoggedFT)
		if e.PooledFT != nil {
			c[3] = diff(*e.PooledFT - *e.LoggedFT)
		}
	}
	return c
}

// signed is d with its sign and two decimals.
func signed(d float64) string {
	s := strconv.FormatFloat(d, 'f', 2, 64)
	if d >= 0 {
		s = "+" + s
	}
	return s
}
