package audit

import "github.com/fedpipe/fedpipe/pipeline"

// Report is the audit of a seeded sample of kept train results.
type Report struct {
	// Cells are the audited results' verdicts, in the sample's (graph) order.
	Cells []Cell
	// Kept is how many kept train results the sample was drawn from.
	Kept int
	// Counts counts the cells by verdict.
	Counts map[string]int
	// Bitwise counts the cells recomputed bit for bit; Crossed those given a cross-backend
	// check, CrossPassed those of them that passed it.
	Bitwise, Crossed, CrossPassed int
}

// Passed reports whether every audited cell passed.
func (r Report) Passed() bool { return r.Counts[Pass] == len(r.Cells) }

// Run audits a seeded sample of k of nodes (Sample; k ≤ 0: all) one at a time with check
// (Node or Kept), calling progress before each with its place in the sample.
func Run(nodes []*pipeline.Node, k int, seed int64, progress func(i, of int, n *pipeline.Node), check func(*pipeline.Node) (Cell, error)) (Report, error) {
	r := Report{Kept: len(nodes), Counts: map[string]int{}}
	sample := Sample(nodes, k, seed)
	for i, n := range sample {
		progress(i, len(sample), n)
		c, err := check(n)
		if err != nil {
			return r, err
		}
		r.Cells = append(r.Cells, c)
		r.Counts[c.Verdict]++
		if c.Bitwise {
			r.Bitwise++
		}
		if c.Cross != "" {
			r.Crossed++
			if c.Cross == CrossPass {
				r.CrossPassed++
			}
		}
	}
	return r, nil
}
