package kept

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/fedpipe/fedpipe/manifest"
	"github.com/fedpipe/fedpipe/results/listing"
)

// CurveThreshold is how far, in points, a kept curve may sit from its authors' log before
// it needs a recorded deviation: at the round the log reports (its best before
// fine-tuning), or at every evaluation of the last half of training on the same side.
const CurveThreshold = 0.5

// CurveRound is one evaluation round of a kept curve beside its log. Kept or Logged is nil
// where that side has no evaluation at the round; the differences (kept − logged) are set
// where both sides have the figure.
type CurveRound struct {
	Round  int                  `json:"round"`
	Kept   *listing.CurvePoint  `json:"kept,omitempty"`
	Logged *manifest.LoggedEval `json:"logged,omitempty"`
	Diff   *float64             `json:"diff,omitempty"`
	DiffFT *float64             `json:"diff_ft,omitempty"`
}

// CurveCheck is a kept curve compared with its authors' log (CompareCurve).
type CurveCheck struct {
	Method string `json:"method"`
	Source string `json:"source"`
	// Seeds is how many kept seeds the kept curve is the mean of (0: nothing kept).
	Seeds  int          `json:"seeds"`
	Rounds []CurveRound `json:"rounds"`
	// Reported is the round the log reports (its best before fine-tuning) and
	// ReportedDiff the kept curve's difference there (nil when the kept curve lacks it).
	Reported     int      `json:"reported_round"`
	ReportedDiff *float64 `json:"reported_diff,omitempty"`
	// Steady is set when every evaluation of the last half of training that both sides
	// have differs by more than CurveThreshold on the same side.
	Steady bool `json:"steady"`
	// Over is set when the curve needs a deviation: ReportedDiff beyond CurveThreshold,
	// or Steady.
	Over bool `json:"over"`
	// Deviation is the recorded deviation (manifest.DeviationOf); Flagged is Over
	// without one.
	Deviation string `json:"deviation,omitempty"`
	Flagged   bool   `json:"flagged"`
	// OnLog is set when Deviation is the log entry's own (manifest.LoggedRun.Deviation),
	// which the page shows even for a curve within the threshold.
	OnLog bool `json:"deviation_on_log,omitempty"`
	// Absent is set where the authors published no log of the method
	// (manifest.LoggedRun.Absent): the curve is the kept one alone.
	Absent string `json:"absent,omitempty"`
	// NoEntry is set for a kept method of a manifest that records logs but none of this
	// method, not even absent: the curve is the kept one alone, and it fails the check
	// (Counts.NoEntry) until the manifest says what the authors published.
	NoEntry bool `json:"no_logs_entry,omitempty"`
}

// CompareCurve sets the kept curve kept (the mean over seeds kept seeds, in round order)
// beside log, the training being rounds long: the difference at every round both have,
// at the round the log reports, and whether the curve sits off the log steadily over the
// last half of training. deviation is what the manifest records for it.
func CompareCurve(log manifest.LoggedRun, rounds int, kept []listing.CurvePoint, seeds int, deviation string) CurveCheck {
	c := CurveCheck{Method: log.Method, Source: log.Source, Seeds: seeds, Deviation: deviation, Absent: log.Absent}
	byRound := map[int]listing.CurvePoint{}
	for _, p := range kept {
		byRound[p.Round] = p
	}
	best := math.Inf(-1)
	for _, e := range log.Evals {
		if e.Before > best {
			best, c.Reported = e.Before, e.Round
		}
	}
	logged := map[int]manifest.LoggedEval{}
	var all []int
	for _, e := range log.Evals {
		logged[e.Round] = e
		all = append(all, e.Round)
	}
	for _, p := range kept {
		if _, ok := logged[p.Round]; !ok {
			all = append(all, p.Round)
		}
	}
	slices.Sort(all)
	steadySign, steadyN, steady := 0, 0, true
	for _, round := range slices.Compact(all) {
		r := CurveRound{Round: round}
		p, hasKept := byRound[round]
		e, hasLog := logged[round]
		if hasKept {
			r.Kept = &p
		}
		if hasLog {
			r.Logged = &e
		}
		if hasKept && hasLog {
			d := p.Before - e.Before
			r.Diff = &d
			if p.After != nil && e.After != nil {
				dft := *p.After - *e.After
				r.DiffFT = &dft
			}
			if round == c.Reported {
				c.ReportedDiff = r.Diff
			}
			if 2*round > rounds {
				steadyN++
				s := sign(d)
				if math.Abs(d) <= CurveThreshold || (steadySign != 0 && s != steadySign) {
					steady = false
				}
				steadySign = s
			}
		}
		c.Rounds = append(c.Rounds, r)
	}
	c.Steady = steady && steadyN > 0
	c.Over = c.Steady || (c.ReportedDiff != nil && math.Abs(*c.ReportedDiff) > CurveThreshold)
	c.Flagged = c.Over && deviation == ""
	return c
}

// sign is −1, 0 or 1 as d is negative, zero or positive.
func sign(d float64) int {
	switch {
	case d < 0:
		return -1
	case d > 0:
		return 1
	}
	return 0
}

// Summary is one line saying how the kept curve sits against its log: the difference at
// the reported round, whether it is steady over the last half, and whether it needs a
// deviation that is missing.
func (c CurveCheck) Summary() string {
	if c.Seeds == 0 {
		return "nothing kept to compare with the log"
	}
	if c.Absent != "" {
		return "the authors published no log of this method: " + c.Absent
	}
	if c.NoEntry {
		return "this manifest records the authors' logs but has no logs entry for this method: add its log, or absent saying where the authors' logs were searched"
	}
	s := fmt.Sprintf("kept − logged at the log's reported round %d: ", c.Reported)
	if c.ReportedDiff == nil {
		s += "not evaluated by the kept run"
	} else {
		s += fmt.Sprintf("%+.2f", *c.ReportedDiff)
	}
	if c.Steady {
		s += fmt.Sprintf("; beyond %.1f on the same side at every evaluation of the last half", CurveThreshold)
	}
	switch {
	case c.Flagged:
		s += fmt.Sprintf("; differs from the authors' log by more than %.1f with no deviation recorded", CurveThreshold)
	case c.Over:
		s += "; differs from the authors' log (deviation recorded)."
	case c.OnLog && c.Deviation != "":
		s += fmt.Sprintf("; within %.1f of the authors' log (a deviation is recorded).", CurveThreshold)
	default:
		s += fmt.Sprintf("; within %.1f of the authors' log", CurveThreshold)
	}
	return s
}

// CurveRows are the rows of a curve's table, one per evaluation round: round, kept
// before, logged before, kept − logged, the same three after fine-tuning, and the log's
// line; "—" where a side has no figure.
func (c CurveCheck) CurveRows() [][]string {
	two := func(v *float64) string {
		if v == nil {
			return "—"
		}
		return fmt.Sprintf("%.2f", *v)
	}
	diff := func(v *float64) string {
		if v == nil {
			return "—"
		}
		return fmt.Sprintf("%+.2f", *v)
	}
	var rows [][]string
	for _, r := range c.Rounds {
		var kb, ka, lb, la *float64
		line := "—"
		if r.Kept != nil {
			kb, ka = &r.Kept.Before, r.Kept.After
		}
		if r.Logged != nil {
			lb, la = &r.Logged.Before, r.Logged.After
			line = fmt.Sprintf("L%d", r.Logged.Line)
		}
		rows = append(rows, []string{fmt.Sprint(r.Round), two(kb), two(lb), diff(r.Diff), two(ka), two(la), diff(r.DiffFT), line})
	}
	return rows
}

// CurveHeader names the columns of CurveRows.
var CurveHeader = []string{"round", "kept", "logged", "diff", "kept after FT", "logged after FT", "diff after FT", "log line"}

// keptLabel says what the kept curve is: one seed's, or the mean over several.
func (c CurveCheck) keptLabel() string {
	if c.Seeds == 1 {
		return "the kept seed"
	}
	return fmt.Sprintf("the mean of %d kept seeds", c.Seeds)
}

// against names what the kept curve is set beside, its source written by src: the
// authors' log, or the place searched for one where they published none.
func (c CurveCheck) against(src func(string) string) string {
	if c.NoEntry {
		return "no logs entry"
	}
	if c.Absent != "" {
		return "no authors' log in " + src(c.Source)
	}
	return "beside " + src(c.Source)
}

// WriteCurvesText writes curves as `fedpipe reproduced` prints them under a manifest:
// per method its log, its summary line, and a row per evaluation round.
func WriteCurvesText(w io.Writer, curves []CurveCheck) {
	for _, c := range curves {
		if c.Seeds == 0 {
			continue
		}
		paren := func(s string) string { return "the authors' log (" + s + ")" }
		if c.Absent != "" {
			paren = func(s string) string { return s }
		}
		fmt.Fprintf(w, "  %s, %s, %s: %s\n", c.Method, c.keptLabel(), c.against(paren), c.Summary())
		fmt.Fprintf(w, "    %s\n", strings.Join(CurveHeader, " | "))
		for _, r := range c.CurveRows() {
			fmt.Fprintf(w, "    %s\n", strings.Join(r, " | "))
		}
	}
}

// curvesMarkdown writes curves as the page shows them under a manifest's table.
func curvesMarkdown(b *strings.Builder, curves []CurveCheck) {
	var kept []CurveCheck
	for _, c := range curves {
		if c.Seeds > 0 {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return
	}
	fmt.Fprintf(b, "\nKept curves beside the authors' logs (pooled test accuracy %%, before and after fine-tuning; diff = kept − logged; "+
		"a curve more than %.1f off its log at the round the log reports, or on one side at every evaluation of the last half, "+
		"needs a recorded deviation):\n", CurveThreshold)
	for _, c := range kept {
		fmt.Fprintf(b, "\n**%s**, %s, %s: %s", c.Method, c.keptLabel(), c.against(mdEscape), mdEscape(c.Summary()))
		if (c.Over || c.OnLog) && c.Deviation != "" {
			fmt.Fprintf(b, " Deviation: %s", mdEscape(c.Deviation))
		}
		b.WriteString("\n\n| " + strings.Join(CurveHeader, " | ") + " |\n")
		b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---|\n")
		for _, r := range c.CurveRows() {
			b.WriteString("| " + strings.Join(r, " | ") + " |\n")
		}
	}
}
