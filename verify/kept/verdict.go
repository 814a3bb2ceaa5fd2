package kept

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/verify"
)

// Verdict words of kept paper-scale results (fedpipe reproduced): a published cell is
// reproduced (within tolerance), differs, stale (its kept result was made by other code or
// settings than its backend's current ones), not computed, or needs an input that is missing here (model.init's
// pretrained weights), which keeps it out of the count of cells that can be computed.
const (
	Reproduced = "reproduced"
	Differs    = "differs"
)

// Word is the kept-results word of a verdict.
func Word(verdict string) string {
	switch verdict {
	case verify.Pass:
		return Reproduced
	case verify.Fail:
		return Differs
	}
	return verdict
}

// Verdict is the kept-results verdict of c as the command and the page show it: the
// word, why a stale cell is stale, which backend's result it reads (KeptOn), and whether a differing cell's deviation is known (its
// text too with detail).
func Verdict(c verify.Cell, detail bool) string {
	v := Word(c.Verdict)
	if c.Verdict == verify.Needs {
		return v + " " + c.Needs
	}
	switch {
	case c.StaleWhy != "" && c.StaleSeeds > 0:
		v += fmt.Sprintf(" (%s; it measured %.2f over %d of %d seeds)", c.StaleWhy, c.StaleMeasured, c.StaleSeeds, c.SeedsOf)
	case c.StaleWhy != "":
		v += " (" + c.StaleWhy + ")"
	}
	if c.Verdict == verify.Pass || c.Verdict == verify.Fail {
		v += c.SpreadVerdict()
	}
	if c.KeptOn != "" {
		v += " (the " + c.KeptOn + " result"
		if len(c.KeptOthers) > 0 {
			v += "; also kept: " + strings.Join(c.KeptOthers, ", ")
		}
		v += ")"
	}
	switch {
	case c.Known != "" && detail:
		v += " (known deviation: " + c.Known + ")"
	case c.Known != "":
		v += " (known deviation)"
	}
	return v
}

// Manifest is one manifest's part of a kept-results check.
type Manifest struct {
	File string `json:"file"`
	Name string `json:"name"`
	// Skipped says why the manifest was not checked (its data is not installed, it has no
	// expect entries); empty when it was.
	Skipped string `json:"skipped,omitempty"`
	// NeedsInit names, for a manifest not checked, the initial weights its cells would also
	// need that are missing here (model.init); empty when none.
	NeedsInit string        `json:"needs_init,omitempty"`
	Cells     []verify.Cell `json:"cells,omitempty"`
	// Provenance holds, per cell (same index), how its kept results were made: one line
	// per seed measured.
	Provenance [][]string `json:"provenance,omitempty"`
	// Claims are the verdicts of the manifest's claims on the kept results (of a manifest
	// not checked: not computable, ClaimVerdict.Why saying why).
	Claims []verify.ClaimVerdict `json:"claims,omitempty"`
	// Curves are the kept curves beside the authors' logs the manifest records
	// (manifest.LoggedRun), one per log.
	Curves []CurveCheck `json:"curves,omitempty"`
}

// Counts tallies the cells of checked manifests by kept-results verdict.
type Counts struct {
	// Cells counts the cells that can be computed here (every verdict but Needs).
	Cells, Reproduced, Differs, Stale, Missing int
	// Known counts the cells that differ with a recorded deviation (not in Differs).
	Known int
	// OffLog counts the kept curves that differ from their authors' logs with no
	// deviation recorded (CurveCheck.Flagged); they fail the check as a differing cell does.
	OffLog int
	// NoEntry counts the kept curves of manifests that record logs with no logs entry for
	// their method (CurveCheck.NoEntry); they fail the check too.
	NoEntry int
	// Needs counts the cells that need an input missing here (not in Cells), by what they
	// need ("model.init").
	Needs map[string]int
	// WithinSpread counts the reproduced cells whose measured mean also lies within the
	// published spread (Cell.Spread), of SpreadDecided reproduced cells where that can be
	// decided (a published std and number of runs).
	WithinSpread, SpreadDecided int
}

// Count tallies ms.
func Count(ms []Manifest) Counts {
	var k Counts
	for _, m := range ms {
		for _, c := range m.Curves {
			if c.Flagged {
				k.OffLog++
			}
			if c.NoEntry {
				k.NoEntry++
			}
		}
		for _, c := range m.Cells {
			if c.Verdict == verify.Needs {
				if k.Needs == nil {
					k.Needs = map[string]int{}
				}
				what, _, _ := strings.Cut(c.Needs, ":")
				k.Needs[what]++
				continue
			}
			k.Cells++
			switch c.Verdict {
			case verify.Pass:
				k.Reproduced++
				if c.Spread != nil {
					k.SpreadDecided++
					if c.Spread.Within {
						k.WithinSpread++
					}
				}
			case verify.Fail:
				if c.Known != "" {
					k.Known++
				} else {
					k.Differs++
				}
			case verify.Stale:
				k.Stale++
			default:
				k.Missing++
			}
		}
	}
	return k
}

// Line is the one-line summary CI prints.
func (k Counts) Line() string {
	s := fmt.Sprintf("%d of %d published cells reproduced at paper scale (%d stale, %d not computed", k.Reproduced, k.Cells, k.Stale, k.Missing)
	if k.Known > 0 {
		s += fmt.Sprintf(", %d differ with a known deviation", k.Known)
	}
	if k.Differs > 0 {
		s += fmt.Sprintf(", %d differ", k.Differs)
	}
	s += ")"
	if k.OffLog > 0 {
		s += fmt.Sprintf("; %d kept curves differ from the authors' logs with no deviation recorded", k.OffLog)
	}
	if k.NoEntry > 0 {
		s += fmt.Sprintf("; %d kept curves have no logs entry (the authors' log, or absent)", k.NoEntry)
	}
	if k.SpreadDecided > 0 {
		s += fmt.Sprintf("; %d of the %d reproduced with a published spread also within it", k.WithinSpread, k.SpreadDecided)
	}
	whats := make([]string, 0, len(k.Needs))
	for what := range k.Needs {
		whats = append(whats, what)
	}
	sort.Strings(whats)
	var needs []string
	for _, what := range whats {
		needs = append(needs, fmt.Sprintf("%d more need %s", k.Needs[what], what))
	}
	if len(needs) > 0 {
		s += "; " + strings.Join(needs, ", ") + ", not obtainable here"
	}
	return s
}

// Page renders the kept-results page (docs/reproduced.md): the summary line, then per
// checked manifest a table of its published cells with the measured figure, the verdict
// and how the kept result was made, then the manifests not checked and why. It depends
// only on the manifests and the kept results, so it is reproducible and CI can tell
// whether the committed page is current.
func Page(ms []Manifest, regenerate string) string {
	var b strings.Builder
	b.WriteString("# Published numbers reproduced at paper scale\n\n")
	fmt.Fprintf(&b, "Generated from the kept results in `reproduced/` by `%s`; do not edit by hand (CI fails when it is out of date). "+
		"A cell is *reproduced* when its kept measurement (the mean over the seeds kept so far) is within the expectation's "+
		"tolerance of the published number, *differs* otherwise, *stale* when its kept results were made by other code or settings "+
		"than the current ones, *not computed* when nothing is kept, and *needs* an input that cannot be obtained here "+
		"(model.init's pretrained weights) when its published setting starts from one; those are counted apart. "+
		"A result made on any backend counts (fpfast, fpcpu, a GPU's `xla-cuda`): a verdict reads fpfast's result when it has a current one, "+
		"else another backend's, and then names it (\"the xla-cuda result\"); how it was made names the backend id (docs/reproducing.md).\n\n", regenerate)
	b.WriteString(keptEvidenceNote)
	b.WriteString(claimsNote)
	b.WriteString("**" + Count(ms).Line() + "**\n\n")
	b.WriteString("**" + verify.TallyClaims(ClaimsOf(ms)).Line() + "**\n\n")
	for _, l := range PaperLines(ms) {
		b.WriteString("- " + l + "\n")
	}
	var skipped []Manifest
	for _, m := range ms {
		if m.Skipped != "" {
			skipped = append(skipped, m)
			continue
		}
		fmt.Fprintf(&b, "\n## %s (`%s`)\n\n", m.Name, m.File)
		b.WriteString("| method | cell | metric | published | measured (mean of the kept seeds) | diff | verdict | how it was made |\n")
		b.WriteString("|---|---|---|---:|---:|---:|---|---|\n")
		for i, c := range m.Cells {
			row := c.Row()
			verdict := Verdict(c, true)
			how := "—"
			if i < len(m.Provenance) && len(m.Provenance[i]) > 0 {
				how = strings.Join(m.Provenance[i], "<br>")
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", row[0], row[1], row[2], row[3], row[4], row[5],
				mdEscape(verdict), mdEscape(how))
		}
		if len(m.Claims) > 0 {
			b.WriteString("\nClaims:\n\n")
			for _, v := range m.Claims {
				b.WriteString("- " + v.Line() + "\n")
			}
		}
		curvesMarkdown(&b, m.Curves)
	}
	if len(skipped) > 0 {
		b.WriteString("\n## Not checked here\n\n")
		for _, m := range skipped {
			fmt.Fprintf(&b, "- `%s`: %s", m.File, m.Skipped)
			if n := len(m.Claims); n > 0 {
				fmt.Fprintf(&b, " (%d claims not computable)", n)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// mdEscape keeps a table cell one cell.
func mdEscape(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// Reading is one backend's reading of a manifest's published cells from the kept
// results: the cells as VerifyWith gives them for the graph built with that backend's id,
// in the manifest's order, and per cell how its kept results were made.
type Reading struct {
	// Family is the backend family ("fpfast", "xla-cuda").
	Family     string
	Cells      []verify.Cell
	Provenance [][]string
}

// keptRank orders readings of one cell: a current result (reproduced or differs) before a
// stale one before none.
func keptRank(c verify.Cell) int {
	switch c.Verdict {
	case verify.Pass, verify.Fail:
		return 2
	case verify.Stale:
		return 1
	}
	return 0
}

// Choose gives each cell the verdict of one backend's kept result, rs[0] being the
// reference backend's reading and the others' readings of the same manifest: a current
// result counts whichever backend made it, the reference backend's first, then the others'
// in order; failing any, a stale one in the same order; failing that, rs[0]'s cell (not
// computed). The chosen cell names its backend (KeptOn) when it is not the reference's or
// when other backends keep results of the cell too (KeptOthers: what they read).
func Choose(rs []Reading) ([]verify.Cell, [][]string) {
	if len(rs) == 0 {
		return nil, nil
	}
	cells := make([]verify.Cell, len(rs[0].Cells))
	prov := make([][]string, len(rs[0].Cells))
	for i := range rs[0].Cells {
		best := 0
		for j, r := range rs {
			if i < len(r.Cells) && keptRank(r.Cells[i]) > keptRank(rs[best].Cells[i]) {
				best = j
			}
		}
		c := rs[best].Cells[i]
		if i < len(rs[best].Provenance) {
			prov[i] = rs[best].Provenance[i]
		}
		if keptRank(c) > 0 {
			for j, r := range rs {
				// Another build of the same backend (an XLA plugin) reads the chosen
				// result as another key's: it is no other backend's result.
				if j != best && r.Family != rs[best].Family && i < len(r.Cells) && keptRank(r.Cells[i]) > 0 {
					c.KeptOthers = append(c.KeptOthers, r.Family+": "+Word(r.Cells[i].Verdict))
				}
			}
			if best != 0 || len(c.KeptOthers) > 0 {
				c.KeptOn = rs[best].Family
			}
		}
		cells[i] = c
	}
	return cells, prov
}

// keptEvidenceNote explains, on the kept-results page (Page), the evidence beside each verdict.
const keptEvidenceNote = "Beside each verdict: the published mean ± std with the number of runs it is over (n) where the paper states it; " +
	"the measurement's 95 % interval — over seeds (Student t) when several are kept, else the one run's test-set interval " +
	"(Wilson over its pooled test samples, or a bootstrap over its clients), which shows how much another test set would move " +
	"the number, not another training seed; and the difference in units of the published std, how many of the paper's own " +
	"run-to-run deviations the measurement lies from its mean. The verdict is the tolerance rule (within the expectation's tolerance, in points); " +
	"where the paper states its std and number of runs n, a second verdict follows it: whether the mean of the k kept seeds lies within the " +
	"published spread, the 95 % prediction interval of a mean of k runs, published mean ± t(0.975, n − 1) · s · √(1/k + 1/n), s the published " +
	"std converted from a population to a sample std (docs/statistics.md). The tolerance asks whether the number is close enough to use; the " +
	"spread asks whether it could be one more draw of the paper's own runs.\n\n"
