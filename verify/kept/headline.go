package kept

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fedpipe/fedpipe/verify"
)

// papers names the paper of a table manifest by its file name's prefix.
var papers = []struct{ prefix, name string }{
	{"fedobp-", "FedOBP"},
	{"dmpfl-", "DM-PFL"},
	{"fedselect-", "FedSelect"},
	{"table1.", "FedSelect"},
}

// PaperOf is the paper whose table manifest file is ("" when none).
func PaperOf(file string) string {
	base := filepath.Base(file)
	for _, p := range papers {
		if strings.HasPrefix(base, p.prefix) {
			return p.name
		}
	}
	return ""
}

// PaperLines are the headline's lines, one per paper: its published cells with a kept
// current result of those that can be computed here, and how many seeds each rests on;
// or, where none can be computed, why ("FedSelect: not computable here: …").
func PaperLines(ms []Manifest) []string {
	type tally struct {
		kept, cells int
		seeds       map[string]bool
		why, data   map[string]bool
	}
	byPaper := map[string]*tally{}
	var order []string
	for _, m := range ms {
		p := PaperOf(m.File)
		if p == "" {
			p = m.Name
		}
		t, ok := byPaper[p]
		if !ok {
			t = &tally{seeds: map[string]bool{}, why: map[string]bool{}, data: map[string]bool{}}
			byPaper[p] = t
			order = append(order, p)
		}
		if m.Skipped != "" {
			if d, ok := strings.CutPrefix(m.Skipped, "data not installed ("); ok {
				t.data[strings.TrimSuffix(d, ")")] = true
			} else {
				t.why[m.Skipped] = true
			}
			if m.NeedsInit != "" {
				t.why["pretrained weights for "+m.NeedsInit] = true
			}
			continue
		}
		for _, c := range m.Cells {
			if c.Verdict == verify.Needs {
				what, _, _ := strings.Cut(c.Needs, " (")
				t.why["pretrained weights for "+what] = true
				continue
			}
			t.cells++
			if c.Verdict == verify.Pass || c.Verdict == verify.Fail {
				t.kept++
				t.seeds[fmt.Sprintf("%d of %d", c.Seeds, c.SeedsOf)] = true
			}
		}
	}
	var lines []string
	for _, p := range order {
		t := byPaper[p]
		var why []string
		for w := range t.why {
			why = append(why, w)
		}
		sort.Strings(why)
		if len(t.data) > 0 {
			var data []string
			for d := range t.data {
				data = append(data, d)
			}
			sort.Strings(data)
			why = append([]string{"data not installed: " + strings.Join(data, ", ")}, why...)
		}
		if t.cells == 0 {
			lines = append(lines, fmt.Sprintf("%s: not computable here: %s", p, strings.Join(why, "; ")))
			continue
		}
		s := fmt.Sprintf("%s: %d of %d published cells kept", p, t.kept, t.cells)
		if len(t.seeds) > 0 {
			var seeds []string
			for k := range t.seeds {
				seeds = append(seeds, k)
			}
			sort.Strings(seeds)
			s += " (" + strings.Join(seeds, ", ") + " seeds each)"
		}
		if len(why) > 0 {
			s += "; not checked here: " + strings.Join(why, "; ")
		}
		lines = append(lines, s)
	}
	return lines
}

// ClaimsOf gathers the claim verdicts of ms, in order.
func ClaimsOf(ms []Manifest) []verify.ClaimVerdict {
	var out []verify.ClaimVerdict
	for _, m := range ms {
		out = append(out, m.Claims...)
	}
	return out
}

// claimsNote explains the claim verdicts on the kept-results page.
const claimsNote = "Each table's *claims* are what its paper concludes from it (its bold, or a sentence of its text), as the manifest's " +
	"`claims:` records them, each checked on the kept results: *holds* when every comparison it rests on goes the claimed way at the 5 % level, " +
	"*reversed* when one goes significantly the other way, *undecided* otherwise, *not computable yet* when a method it needs has no kept result. " +
	"With two or more seeds of both methods kept, the test pairs them over seeds (the exact sign-flip test `fedpipe diff` uses); with one, it pairs the " +
	"clients' final accuracies of that one run (Wilcoxon signed-rank), which shows the variation within one training run, not between runs: a " +
	"claim that holds or is reversed on one seed may not on another (docs/statistics.md). A reversed claim is a finding about the paper, not a " +
	"failure of fedpipe: it changes no exit code.\n\n"
