package audit

import (
	"fmt"
	"strings"

	"github.com/fedpipe/fedpipe/model"
	"github.com/fedpipe/fedpipe/verify/kept"
)

// crossText describes a cross-backend check for the audit's table.
func crossText(c Cell, tol float64) string {
	d := c.CrossDiff
	switch {
	case c.Cross == "":
		return ""
	case d == nil:
		return "cross-backend check: " + c.Cross
	case d.Mismatch != "":
		return "cross-backend check: " + c.Cross + " (" + d.Mismatch + ")"
	}
	return fmt.Sprintf("cross-backend check: %s (round 1 on %s against the kept sketch: largest relative difference %.2g, %s, of %d tensors; tolerance %g)",
		c.Cross, model.CPUBackend, d.Worst, d.WorstTensor, d.Tensors, tol)
}

// Markdown lays the audited cells out as a table; a failure names its first differing
// round and both digests.
func Markdown(cells []Cell, tol float64) string {
	var b strings.Builder
	b.WriteString("| cell | rounds | verdict | detail |\n|---|---:|---|---|\n")
	for _, c := range cells {
		detail := c.Note
		if c.Round > 0 {
			detail = fmt.Sprintf("round %d: recorded %s, recomputed %s", c.Round, c.Recorded, c.Recomputed)
		}
		if x := crossText(c, tol); x != "" {
			detail = strings.TrimPrefix(detail+"; "+x, "; ")
		}
		cell := c.Cell
		if c.Backend != "" && c.Backend != kept.ReferenceFamily {
			cell += " (made on " + c.Backend + ")"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", mdCell(cell), c.Rounds, c.Verdict, mdCell(detail))
	}
	return b.String()
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
